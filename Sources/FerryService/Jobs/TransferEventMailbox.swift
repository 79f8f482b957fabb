import FerryEngine
import Synchronization

/// The engine's events on their way to the supervisor (`RunningService`'s event pump): a `TransferEventQueue`, so a
/// supervisor held up (a busy actor, a slow build) finds one progress sample per transfer and the lifecycle events
/// waiting, not every sample since it last looked. It replaced an unbounded `AsyncStream` that a debug build's
/// supervisor let grow to 16 MB under the load suite (issue 32).
///
/// Owner: its lock, held only to queue or take events; `post` from any thread, `deliver` from one task.
final class TransferEventMailbox: Sendable {
    private struct State {
        var queue = TransferEventQueue()
        /// Events posted, and how many of the first posted are applied (a merged sample counts as applied with
        /// the one that replaced it).
        var posted: UInt64 = 0
        var applied: UInt64 = 0
        /// `barrier()` callers, each with the count it waits for.
        var waiters: [(through: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var finished = false

        /// Records that the first `through` events are applied and takes the waiters that were waiting for them.
        mutating func applied(through: UInt64) -> [CheckedContinuation<Void, Never>] {
            applied = max(applied, through)
            let ready = waiters.filter { $0.through <= applied }.map(\.continuation)
            waiters.removeAll { $0.through <= applied }
            return ready
        }
    }

    private let waiting = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    init() {
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues an event (any thread).
    func post(_ event: TransferEvent) {
        waiting.withLock { state in
            state.queue.append(event)
            state.posted += 1
        }
        wake.yield()
    }

    /// After the last `post`: `deliver` returns once it has applied what waits.
    func finish() { wake.finish() }

    /// Returns once every event posted before the call has been applied (at once when none waits, or once
    /// `deliver` has ended).
    func barrier() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = waiting.withLock { state -> Bool in
                guard state.applied < state.posted, !state.finished else { return true }
                state.waiters.append((state.posted, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Hands every event to `apply`, in order, until `finish()` and nothing waits. Call once.
    func deliver(to apply: (TransferEvent) async -> Void) async {
        for await _ in wakes { await applyWaiting(apply) }
        await applyWaiting(apply)
        let left = waiting.withLock { state in
            state.finished = true
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for waiter in left { waiter.resume() }
    }

    private func applyWaiting(_ apply: (TransferEvent) async -> Void) async {
        while true {
            let (batch, through) = waiting.withLock { ($0.queue.takeAll(), $0.posted) }
            for event in batch { await apply(event) }
            let ready = waiting.withLock { $0.applied(through: through) }
            for waiter in ready { waiter.resume() }
            if batch.isEmpty { return }
        }
    }

    /// Events waiting now.
    var count: Int { waiting.withLock { $0.queue.count } }
}
