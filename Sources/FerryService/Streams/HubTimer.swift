import Dispatch

/// One timer on a queue that fires at the earliest time it was asked for, then waits to be asked again.
///
/// Owner: the queue it runs on (`EventHub`'s): `schedule(at:)` and `cancel()` are called there only, and it fires there.
final class HubTimer: @unchecked Sendable {
    private let queue: DispatchQueue
    private let clock: @Sendable () -> Double
    private let fire: @Sendable () -> Void
    private var source: DispatchSourceTimer?
    private var due: Double?

    /// `fire` runs on `queue` at the earliest time scheduled (seconds on `clock`).
    init(queue: DispatchQueue, clock: @escaping @Sendable () -> Double, fire: @escaping @Sendable () -> Void) {
        self.queue = queue
        self.clock = clock
        self.fire = fire
    }

    deinit { source?.cancel() }

    /// Fires at `time`, unless it is already due to fire no later.
    func schedule(at time: Double) {
        if let due, due <= time { return }
        due = time
        if source == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.setEventHandler { [weak self] in
                self?.due = nil
                self?.fire()
            }
            timer.activate()
            source = timer
        }
        source?.schedule(deadline: .now() + max(0, time - clock()), leeway: .milliseconds(10))
    }

    func cancel() {
        source?.cancel()
        source = nil
        due = nil
    }
}

extension DispatchTime {
    /// Monotonic seconds, for timers and rate decisions.
    var seconds: Double { Double(uptimeNanoseconds) / 1e9 }
}
