import FerryHTTP

/// Live streams of all jobs with one `interval`: they are owed exactly the same bytes, serialized once.
///
/// Owner: `EventHub`'s serial queue. Its `schedule` is offered every event published; what it releases becomes one
/// batch of the `window`, which every member is sent (shared) or keeps a cursor into.
final class SubscriberGroup {
    let interval: Int
    var schedule: SubscriberQueue
    var window: FanoutWindow
    var members: [Int: EventSubscription] = [:]

    init(interval: Int, after: Int64, windowBytes: Int) {
        self.interval = interval
        self.schedule = SubscriberQueue(after: after, filter: .allJobs, intervalMilliseconds: interval, alignedToGrid: true)
        self.window = FanoutWindow(maxBytes: windowBytes)
    }

    /// Takes what the schedule releases now and appends it to the window as one batch, framed once.
    /// - Returns: the batch, its sequence number in the window and its greatest id; nil when nothing is due.
    func release(now: Double) -> (chunk: SharedChunk, sequence: Int, lastID: Int64)? {
        let ready = schedule.take(now: now, writable: true)
        guard let last = ready.last else { return nil }
        let chunk: SharedChunk
        if ready.count == 1 {
            chunk = SharedChunk(last.frame)
        } else {
            var joined: [UInt8] = []
            joined.reserveCapacity(ready.reduce(0) { $0 + $1.frame.count })
            for event in ready { joined += event.frame }
            chunk = SharedChunk(joined)
        }
        return (chunk, window.append(chunk, lastID: last.id), last.id)
    }

    /// Moves the cursor of every member that is owed exactly `batch` and whose socket holds less than `highWater`
    /// unsent bytes past it. Returns their streams by fan-out shard (to be sent the batch) and the members left behind.
    func advance(to batch: (chunk: SharedChunk, sequence: Int, lastID: Int64), highWater: Int, shards: Int,
                 shardOf: (Int) -> Int) -> (current: [[ResponseStream]], behind: [EventSubscription]) {
        var current = [[ResponseStream]](repeating: [], count: shards)
        var behind: [EventSubscription] = []
        for subscription in members.values {
            guard case .shared(let interval, let cursor, _) = subscription.delivery else { continue }
            if cursor == batch.sequence, !subscription.stream.isClosed, subscription.stream.bufferedByteCount < highWater {
                subscription.delivery = .shared(interval: interval, cursor: batch.sequence + 1, lastID: batch.lastID)
                current[shardOf(subscription.key)].append(subscription.stream)
            } else {
                behind.append(subscription)
            }
        }
        return (current, behind)
    }
}
