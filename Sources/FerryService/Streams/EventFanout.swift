import Dispatch
import FerryHTTP
import Synchronization

/// Writes event bytes to event streams off the hub's queue and off the connection queues that serve requests.
///
/// Owns a few fan-out shards (one per core), each a serial queue with an inbox (its lock) of sends not yet taken.
/// Each subscription is assigned to one shard by its key (``shard(of:)``), and every write and the close of that
/// stream go through it, so one stream's bytes keep the order the hub gave them while shards write in parallel. A
/// write is a ``ResponseStream/writeShared(_:)``: the same framed chunks for every stream, straight to each socket the
/// connection lent (one `sendmsg` per stream), the connection's buffered path otherwise. When sends pile up while a
/// shard is busy, it takes them all at once and merges them (`FanoutRound`): each stream then gets one `sendmsg` for
/// all it is owed. Holds no state beyond the inboxes: the hub decides what each stream is owed.
final class EventFanout: Sendable {
    enum Work: Sendable {
        /// The same chunks to every stream, the round starting at `rotation`.
        case write([SharedChunk], [ResponseStream], rotation: Int)
        /// Ends a stream after everything sent to it before.
        case finish(ResponseStream, @Sendable () -> Void)
        /// Runs once the shard has handed the stream everything sent to it before (it is counted in the stream's
        /// `bufferedByteCount` then).
        case then(@Sendable () -> Void)
    }

    private final class Shard: Sendable {
        let queue: DispatchQueue
        /// Sends not yet taken by `queue`, and whether a drain is scheduled there.
        private let inbox = Mutex<(work: [Work], scheduled: Bool)>(([], false))

        init(label: String) {
            queue = DispatchQueue(label: label, qos: .userInitiated)
        }

        func submit(_ work: Work) {
            let schedule = inbox.withLock { inbox in
                inbox.work.append(work)
                defer { inbox.scheduled = true }
                return !inbox.scheduled
            }
            if schedule { queue.async { self.drain() } }
        }

        private func drain() {
            dispatchPrecondition(condition: .onQueue(queue))
            while true {
                let work = inbox.withLock { inbox -> [Work] in
                    if inbox.work.isEmpty { inbox.scheduled = false }
                    defer { inbox.work = [] }
                    return inbox.work
                }
                guard !work.isEmpty else { return }
                EventFanout.run(work)
            }
        }
    }

    private let shards: [Shard]

    init(shards: Int) {
        self.shards = (0..<max(1, shards)).map { Shard(label: "ferry.events.fanout.\($0)") }
    }

    var shardCount: Int { shards.count }

    /// The shard that writes to the stream of subscription `key`.
    func shard(of key: Int) -> Int { key % shards.count }

    /// Sends `chunks` to every stream of `streams[shard]` through that shard. Within a shard the streams are served
    /// starting at `rotation` (modulo their count), so that no stream is always the last one served.
    func send(_ chunks: [SharedChunk], to streams: [[ResponseStream]], rotation: Int) {
        guard !chunks.isEmpty else { return }
        for (shard, members) in streams.enumerated() where !members.isEmpty {
            shards[shard].submit(.write(chunks, members, rotation: rotation))
        }
    }

    /// Sends `chunks` to one stream, in order with everything else sent to it.
    func send(_ chunks: [SharedChunk], to stream: ResponseStream, key: Int) {
        guard !chunks.isEmpty else { return }
        shards[shard(of: key)].submit(.write(chunks, [stream], rotation: 0))
    }

    /// Runs `action` on the shard of subscription `key` once everything sent to it before was handed to its stream.
    func afterWrites(key: Int, _ action: @escaping @Sendable () -> Void) {
        shards[shard(of: key)].submit(.then(action))
    }

    /// Ends a stream after everything sent to it before.
    func close(_ writer: EventStreamWriter, key: Int) {
        shards[shard(of: key)].submit(.finish(writer.stream, { writer.close() }))
    }

    /// Waits until every shard has run what was given to it before (shutdown, tests).
    func settle() {
        for shard in shards { shard.queue.sync {} }
    }

    /// Carries out sends taken together: one alone as it is, several merged into one round.
    private static func run(_ work: [Work]) {
        if work.count == 1, case .write(let chunks, let streams, let rotation) = work[0] {
            let start = Self.start(count: streams.count, rotation: rotation)
            for offset in streams.indices { streams[(start + offset) % streams.count].writeShared(chunks) }
            return
        }
        var round = FanoutRound<ResponseStream>()
        var then: [@Sendable () -> Void] = []
        for item in work {
            switch item {
            case .write(let chunks, let streams, let rotation):
                let start = Self.start(count: streams.count, rotation: rotation)
                round.add(chunks, to: streams[start...] + streams[..<start])
            case .finish(let stream, let action):
                round.finish(stream, with: action)
            case .then(let action):
                then.append(action)
            }
        }
        for delivery in round.deliveries {
            if !delivery.chunks.isEmpty { delivery.target.writeShared(delivery.chunks) }
            delivery.finish?()
        }
        for action in then { action() }
    }

    /// Where a round over `count` streams starts for `rotation` (any integer): `rotation` modulo `count`.
    static func start(count: Int, rotation: Int) -> Int {
        count == 0 ? 0 : ((rotation % count) + count) % count
    }
}
