import Synchronization

/// The engine's events between `queue`, which emits them, and `eventQueue`, which hands them to `onEvent`
/// (`DownloadEngine.emit(_:)`): a `TransferEventQueue` and whether a drain is on its way.
///
/// Owner: its lock, held only to queue or take events. `post` runs on the engine queue, `drain` on the event queue.
final class EventOutbox: Sendable {
    private struct State {
        var waiting = TransferEventQueue()
        var draining = false
    }

    private let state = Mutex(State())

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
