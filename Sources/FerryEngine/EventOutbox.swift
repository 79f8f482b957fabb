import Dispatch
import Synchronization

/// The engine's events between the engine queue, which emits them, and `queue`, which hands them to `deliver` (the
/// service) in order (`DownloadEngine.emit(_:)`): a `TransferEventQueue` and whether a drain is on its way.
///
/// Owner: its lock, held only to queue or take events. `emit`/`post` run on the engine queue, `drain` on `queue`.
/// Whatever must follow the events emitted so far (a pause's observers) runs on `queue` too.
final class EventOutbox: Sendable {
    private struct State {
        var waiting = TransferEventQueue()
        var draining = false
    }

    private let state = Mutex(State())
    /// Where events are delivered, one drain at a time.
    let queue = DispatchQueue(label: "ferry.engine.events")
    private let deliver: @Sendable (TransferEvent) -> Void

    init(deliver: @escaping @Sendable (TransferEvent) -> Void = { _ in }) {
        self.deliver = deliver
    }

    /// Queues `event` and, when no drain is on its way, schedules one on `queue`.
    func emit(_ event: TransferEvent) {
        guard post(event) else { return }
        queue.async { self.drain(self.deliver) }
    }

    /// Queues `event`; true when the caller must schedule a `drain` (none is on its way).
    func post(_ event: TransferEvent) -> Bool {
        state.withLock { state in
            state.waiting.append(event)
            if state.draining { return false }
            state.draining = true
            return true
        }
    }

    /// Hands every waiting event to `deliver`, in order, until none waits; a later `post` then schedules the next drain.
    func drain(_ deliver: (TransferEvent) -> Void) {
        while true {
            let batch = state.withLock { state in
                let batch = state.waiting.takeAll()
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            for event in batch { deliver(event) }
        }
    }

    /// Events waiting (tests).
    var count: Int { state.withLock { $0.waiting.count } }
}
