import FerryEngine
import Synchronization

/// The engine's events on their way to the supervisor (`RunningService`'s event pump): a `TransferEventQueue`, so a
/// supervisor held up (a busy actor, a slow build) finds one progress sample per transfer and the lifecycle events
/// waiting, not every sample since it last looked. It replaced an unbounded `AsyncStream` that a debug build's
/// supervisor let grow to 16 MB under the load suite (issue 32).
///
/// Owner: its lock, held only to queue or take events; `post` from any thread, `deliver` from one task.
final class TransferEventMailbox: Sendable {
    private let waiting = Mutex(TransferEventQueue())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init() {
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues an event (any thread).
    func post(_ event: TransferEvent) {
        waiting.withLock { $0.append(event) }
        wake.yield()
    }

    /// After the last `post`: `deliver` returns once it has applied what waits.
    func finish() { wake.finish() }

    /// Hands every event to `apply`, in order, until `finish()` and nothing waits. Call once.
    func deliver(to apply: (TransferEvent) async -> Void) async {
        for await _ in wakes { await applyWaiting(apply) }
        await applyWaiting(apply)
    }

    private func applyWaiting(_ apply: (TransferEvent) async -> Void) async {
        while true {
            let batch = waiting.withLock { $0.takeAll() }
            if batch.isEmpty { return }
            for event in batch { await apply(event) }
        }
    }

    /// Events waiting (tests).
    var count: Int { waiting.withLock { $0.count } }
}
