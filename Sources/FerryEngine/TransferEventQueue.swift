/// Transfer events waiting for a consumer that has fallen behind, in order, with a job's progress samples merged.
///
/// A job's `.progress` replaces its previous one while that is still the job's latest waiting event: only the
/// newest sample matters, and its place among other jobs' events does not. Every other event is kept, in order, and
/// a job's own events never change order. So however long the consumer is held up, what waits is at most one
/// progress sample per transfer beside the lifecycle events (started, finished, ...) that came meanwhile; without
/// the merge, 200 downloads sampled 4 times a second queue 800 events a second for a consumer that has stopped
/// (issue 32: a debug build's supervisor fell behind under the load suite and the queue grew to 16 MB).
///
/// A value type with no lock: its owner serializes access (`DownloadEngine`'s outbox lock, the service's
/// `TransferEventMailbox`).
public struct TransferEventQueue: Sendable {
    private var events: [TransferEvent] = []
    /// Each waiting job's latest event, by its index in `events`.
    private var latest: [String: Int] = [:]

    public init() {}

    /// Events waiting.
    public var count: Int { events.count }
    public var isEmpty: Bool { events.isEmpty }

    /// Queues `event`, or replaces the job's waiting progress sample with it (see the type's comment).
    public mutating func append(_ event: TransferEvent) {
        let id = event.id
        if case .progress = event, let index = latest[id], case .progress = events[index] {
            events[index] = event
            return
        }
        latest[id] = events.count
        events.append(event)
    }

    /// Everything waiting, oldest first; leaves the queue empty (and its storage released).
    public mutating func takeAll() -> [TransferEvent] {
        let taken = events
        events = []
        latest = [:]
        return taken
    }
}
