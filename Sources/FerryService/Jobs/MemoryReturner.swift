import Dispatch

/// Hands the allocator's free memory back to the system every `interval` when it has piled up
/// (`FreeMemory.worthReturning`), on a Dispatch timer of its own queue.
///
/// Not a task on Swift's cooperative pool: a backlog of requests can keep that pool's few threads busy for seconds,
/// and that is exactly when freed memory piles up. In an hour's soak on a saturated 2-core machine (requests waiting
/// 16 s for the supervisor) the trim, a `.utility` task, ran so rarely that the arenas held 46–80 MB free beside
/// 48–63 MB in use. A serial queue of its own gets a thread of its own.
///
/// Owner: `RunningService`, only when the service manages its process's memory; `stop()` ends it (once, any thread).
final class MemoryReturner: @unchecked Sendable {
    // Written only in `init`; `DispatchSourceTimer.cancel()` may be called from any thread.
    private let timer: DispatchSourceTimer

    /// `check` runs every `interval` on the returner's own queue (tests count it; the service's returns memory).
    init(interval: Duration = FreeMemory.checkInterval, check: @escaping @Sendable () -> Void = MemoryReturner.returnIfWorthIt) {
        let (seconds, attoseconds) = interval.components
        let period = DispatchTimeInterval.nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "ferry.memory"))
        timer.schedule(deadline: .now() + period, repeating: period, leeway: .milliseconds(100))
        timer.setEventHandler(handler: check)
        timer.activate()
    }

    deinit { timer.cancel() }

    /// Stops the checks; one already running finishes.
    func stop() { timer.cancel() }

    /// The service's check: a trim when the arenas hold enough free memory to be worth it.
    static func returnIfWorthIt() {
        if FreeMemory.worthReturning(FreeMemory.figures()) { FreeMemory.returnToSystem() }
    }
}
