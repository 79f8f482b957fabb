import FerryHTTP

/// One open event stream and how the hub feeds it.
///
/// Owner: `EventHub`'s serial queue (every property is read and written only there). Holds at most a bounded
/// piece of what the stream is owed (`outbox`: one page of the replay log or one release of its live queue); a
/// stream that falls behind holds only its position in the log (`EventSubscription.Delivery.log`).
final class EventSubscription {
    /// How a subscription is fed.
    enum Delivery {
        /// A member of the group of that interval: the next batch it needs, and the last id it was sent
        /// (where a resynchronization would start).
        case shared(interval: Int, cursor: Int, lastID: Int64)
        /// A queue of its own, offered every event published: only while its socket keeps up.
        case own(SubscriberQueue)
        /// Reading the replay log after this id, a page as its socket drains: a stream that resumed with
        /// `Last-Event-ID` or fell behind keeps only its position, never a private copy of what it missed.
        case log(after: Int64)
    }

    let key: Int
    var delivery: Delivery
    /// Milliseconds between two progress events of one job that it asked for.
    let interval: Int
    /// The jobs it may be sent (`.allJobs` for a group member).
    let filter: EventFilter
    let stream: ResponseStream
    let writer: EventStreamWriter
    /// The job whose terminal event ends this stream (per-job streams).
    let endsWithJob: String?
    /// The API key the stream was opened with (`JobAccess.owner`): its revocation closes the stream.
    var apiKey: String?
    /// Events taken from its queue or the log and not yet handed to the fan-out (they share their frames with the
    /// log); at most one page or one release.
    var outbox: ArraySlice<ServerEvent> = []
    /// The interval of the group this private stream came from (resynchronized) and may rejoin.
    var rejoins: Int?
    var waitingForDrain = false
    var closed = false

    init(key: Int, delivery: Delivery, interval: Int, filter: EventFilter, stream: ResponseStream,
         writer: EventStreamWriter, endsWithJob: String?) {
        self.key = key
        self.delivery = delivery
        self.interval = interval
        self.filter = filter
        self.stream = stream
        self.writer = writer
        self.endsWithJob = endsWithJob
    }

    /// A stream on a queue of its own stops being offered events: it will read the log from what it has taken.
    func park() {
        if case .own(let own) = delivery { delivery = .log(after: own.lastDeliveredID) }
    }

    /// How a private stream starts (`EventHub.Start`): its delivery, what it is handed first, and whether it is told
    /// to `reset` first (its `Last-Event-ID` cannot be replayed: it gets live events only).
    static func privateStart(_ start: EventHub.Start, filter: EventFilter, interval: Int, log: EventLog,
                             lastAllocated: Int64) -> (delivery: Delivery, outbox: [ServerEvent], reset: Bool) {
        let live = Delivery.own(SubscriberQueue(after: log.newestID, filter: filter, intervalMilliseconds: interval))
        switch start {
        case .live:
            return (live, [], false)
        case .after(let lastID):
            let replays = log.canReplay(after: lastID, lastAllocated: lastAllocated)
            return (replays ? .log(after: lastID) : live, [], !replays)
        case .snapshot(let event):
            let replays = log.canReplay(after: event.id, lastAllocated: lastAllocated)
            let queue = SubscriberQueue(after: event.id, filter: filter, intervalMilliseconds: interval)
            return (replays ? .log(after: event.id) : .own(queue), [event], false)
        }
    }

    /// Fills an empty outbox from its queue (what is due), or from the next page of the log after its position (at
    /// most `pageBytes`), going back to a queue of its own when the page reaches the log's end. Returns false when
    /// the log no longer holds the events after its position: the stream must be closed.
    func refill(from log: EventLog, lastAllocated: Int64, pageBytes: Int, now: Double) -> Bool {
        switch delivery {
        case .own(var own):
            delivery = .log(after: 0)   // keep `own` uniquely referenced
            outbox = own.take(now: now, writable: true)[...]
            delivery = .own(own)
        case .log(let after):
            guard let page = log.page(after: after, lastAllocated: lastAllocated, filter: filter, maxBytes: pageBytes) else {
                return false
            }
            outbox = page.events[...]
            delivery = page.reachedEnd
                ? .own(SubscriberQueue(after: page.through, filter: filter, intervalMilliseconds: interval,
                                       alignedToGrid: rejoins != nil))
                : .log(after: page.through)
        case .shared:
            break
        }
        return true
    }

    /// Takes up to `limit` bytes of the outbox, framed in chunks of up to `chunkBytes` (an event larger goes alone).
    /// `ends`: the stream ends after them (its job's terminal event); the rest of the outbox is then dropped.
    func takeChunks(limit: Int, chunkBytes: Int) -> (chunks: [SharedChunk], ends: Bool) {
        var chunks: [SharedChunk] = []
        var handed = 0
        var ends = false
        while handed < limit, !ends, !outbox.isEmpty {
            var bytes: [UInt8] = []
            while let event = outbox.first, bytes.isEmpty || bytes.count + event.frame.count <= chunkBytes {
                outbox.removeFirst()
                bytes.append(contentsOf: event.frame)
                if let job = endsWithJob, event.jobID == job, event.closesJobStream {
                    ends = true
                    break
                }
            }
            handed += bytes.count
            chunks.append(SharedChunk(bytes))
        }
        if ends { outbox = [] }
        return (chunks, ends)
    }
}
