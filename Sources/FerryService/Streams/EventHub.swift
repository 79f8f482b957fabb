import Dispatch
import FerryHTTP
import Foundation
import Logging

/// Delivers published events to every open event stream.
///
/// Owns, all on its serial `queue`: the `EventLog` (the replay window), the subscriber groups and every
/// subscription's delivery state. Publishing never waits for a subscriber.
///
/// Two ways of delivering:
/// - **Shared** (the common case: a live stream of all jobs, `GET /api/v1/events` without
///   `Last-Event-ID`): streams with the same `interval` form a `Group` with one `SubscriberQueue` and
///   one `FanoutWindow`. Each batch the group's queue releases is serialized and framed once into one
///   `SharedChunk` that every member is sent (shared, not copied) by the `EventFanout`, off this queue;
///   a member keeps only a cursor into the window. A member whose socket
///   buffer is above the high-water mark keeps its cursor and is sent the missed batches when it drains;
///   if by then it is owed more than `resyncBytes`, or its cursor fell out of the window, its progress is
///   coalesced by resynchronizing it from the `EventLog` (as a `Last-Event-ID` reconnection would) into a
///   private queue, and if the log cannot replay that far the stream is closed (the client resumes
///   with `Last-Event-ID` and is told to `reset`). A resynchronized stream rejoins its group once it
///   has caught up and neither side holds anything back (`rejoinGroups`).
/// - **Private** (filtered, per-job and resumed streams, and resynchronized ones): one `SubscriberQueue`
///   per stream, written only while the stream's socket buffer is below the high-water mark; a stream
///   that stays behind has its progress coalesced and is closed once `SubscriberQueue.isTooFarBehind`.
///
/// One timer, running only while some progress is held back by an `interval`, flushes what has become
/// due; a group's progress falls due on a grid of its interval (`SubscriberQueue.grid`) so that the
/// progress of many jobs goes out in one batch. A second timer writes the `: ping` heartbeat to every stream.
///
/// Every byte of a stream, and its close, goes out through the `EventFanout` shard of its subscription (never
/// `ResponseStream.write` from here), so that what this queue decides in order reaches the socket in that order.
final class EventHub: @unchecked Sendable {
    /// Where a new stream starts.
    enum Start: Sendable {
        /// Events published from now on.
        case live
        /// Everything after this id (a `Last-Event-ID`, or a list's `Ferry-Event-Id`).
        case after(Int64)
        /// A snapshot event already rendered (a job's current state), then everything after its id.
        case snapshot(ServerEvent)
    }

    /// How a subscription is fed.
    private enum Delivery {
        /// A member of the group of that interval: the next batch it needs, and the last id it was sent
        /// (where a resynchronization would start).
        case shared(interval: Int, cursor: Int, lastID: Int64)
        /// Its own queue.
        case own(SubscriberQueue)
    }

    private final class Subscription {
        let key: Int
        var delivery: Delivery
        /// Milliseconds between two progress events of one job that it asked for.
        let interval: Int
        let stream: ResponseStream
        let writer: EventStreamWriter
        /// The job whose terminal event ends this stream (per-job streams).
        let endsWithJob: String?
        /// The API key the stream was opened with (`JobAccess.owner`): its revocation closes the stream.
        var apiKey: String?
        /// Events its own queue released and not yet handed to the fan-out (a replay goes out `highWater` bytes at a
        /// time); they share their frames with the log.
        var outbox: ArraySlice<ServerEvent> = []
        /// The interval of the group this private stream came from (resynchronized) and may rejoin.
        var rejoins: Int?
        var waitingForDrain = false
        var closed = false

        init(key: Int, delivery: Delivery, interval: Int, stream: ResponseStream, writer: EventStreamWriter, endsWithJob: String?) {
            self.key = key
            self.delivery = delivery
            self.interval = interval
            self.stream = stream
            self.writer = writer
            self.endsWithJob = endsWithJob
        }
    }

    /// Live streams of all jobs with one `interval`: they are owed exactly the same bytes.
    private final class Group {
        let interval: Int
        var schedule: SubscriberQueue
        var window: FanoutWindow
        var members: [Int: Subscription] = [:]

        init(interval: Int, after: Int64, windowBytes: Int) {
            self.interval = interval
            self.schedule = SubscriberQueue(after: after, filter: .allJobs, intervalMilliseconds: interval, alignedToGrid: true)
            self.window = FanoutWindow(maxBytes: windowBytes)
        }
    }

    let queue = DispatchQueue(label: "ferry.events")
    private let fanout: EventFanout
    /// Where the next group batch starts its round over each shard's members (see `EventFanout.send`).
    private var rotation = 0
    private let ids: EventIDAllocator
    private let logger: Logger
    private var log: EventLog
    private var subscriptions: [Int: Subscription] = [:]
    /// Subscriptions with their own queue.
    private var solo: [Int: Subscription] = [:]
    private var groups: [Int: Group] = [:]
    private var nextKey = 0
    /// Listeners given every published event, in order, on this queue (aria2's notifications, `Aria2Notifier`).
    private var taps: [@Sendable ([ServerEvent]) -> Void] = []
    private var timer: DispatchSourceTimer?
    private var timerDue: Double?
    private var heartbeat: DispatchSourceTimer?
    private let clock: @Sendable () -> Double
    /// Bytes a private stream may have unwritten in its socket buffer before the hub holds events back; also the
    /// most the hub hands such a stream at once, so that a replay of the whole log (16,384 job events, megabytes)
    /// never sits in one stream's buffers (each resynchronized subscriber once held a copy of it, several times over).
    private let highWater = 256 * 1024
    /// The largest chunk a private stream is handed (several events framed together; an event larger goes alone).
    private let chunkBytes = 64 * 1024
    /// The same for a group member, lower: a member held back costs only its cursor, whereas bytes handed
    /// to its connection are copied there, and thousands of members may be slow at once.
    private let sharedHighWater = 16 * 1024
    /// Bytes of missed batches beyond which a returning slow member is resynchronized from the log.
    private let resyncBytes = 64 * 1024
    /// Bytes of batches each group keeps for its slow members.
    private let windowBytes = 512 * 1024
    private let countLock = NSLock()
    private var count = 0
    /// Open streams by the interval they asked for, to know the finest one.
    private var intervals: [Int: Int] = [:]
    /// Told the finest interval any open stream asks for (milliseconds; nil when none is open) whenever it
    /// changes, so that progress is sampled at least that often. Called on the hub's queue; set before streams open.
    var onFinestIntervalChange: (@Sendable (Int?) -> Void)?

    /// - Parameter heartbeat: seconds between `: ping` comments on every stream (0: none).
    /// - Parameter fanoutShards: queues writing to the streams in parallel (default: one per core).
    init(ids: EventIDAllocator, logger: Logger, windowCapacity: Int = EventLog.defaultCapacity, heartbeat: Double = 15,
         fanoutShards: Int = ProcessInfo.processInfo.activeProcessorCount,
         clock: @escaping @Sendable () -> Double = { DispatchTime.now().seconds }) {
        self.fanout = EventFanout(shards: fanoutShards)
        self.ids = ids
        self.logger = logger
        self.log = EventLog(startingAfter: ids.base, capacity: windowCapacity)
        self.clock = clock
        if heartbeat > 0 {
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.schedule(deadline: .now() + heartbeat, repeating: heartbeat, leeway: .milliseconds(100))
            source.setEventHandler { [weak self] in self?.ping() }
            source.activate()
            self.heartbeat = source
        }
    }

    deinit {
        heartbeat?.cancel()
        timer?.cancel()
    }

    /// Open streams (read from any thread, for metrics).
    var subscriberCount: Int {
        countLock.lock(); defer { countLock.unlock() }
        return count
    }

    /// The replay window's `job`/`removed` events and its bound. Waits for the hub's queue: not for hot paths.
    var windowFigures: (count: Int, capacity: Int) {
        queue.sync { (log.count, log.capacity) }
    }

    /// Streams fed by a group (the rest have queues of their own). Waits for the hub's queue: not for hot paths.
    var sharedSubscriberCount: Int {
        queue.sync { groups.values.reduce(0) { $0 + $1.members.count } }
    }

    /// Adds a listener given every event published from now on, in order, on the hub's queue; it must not block.
    func tap(_ listener: @escaping @Sendable ([ServerEvent]) -> Void) {
        queue.async { self.taps.append(listener) }
    }

    /// Appends events (in id order) to the log and offers them to every group and private stream.
    func publish(_ events: [ServerEvent]) {
        queue.async {
            for tap in self.taps { tap(events) }
            let now = self.clock()
            for event in events {
                self.log.append(event)
                for group in self.groups.values { group.schedule.offer(event, now: now) }
                for subscription in self.solo.values {
                    if case .own(var queue) = subscription.delivery {
                        subscription.delivery = .own(SubscriberQueue(after: 0))   // keep `queue` uniquely referenced
                        queue.offer(event, now: now)
                        subscription.delivery = .own(queue)
                    }
                }
            }
            for group in Array(self.groups.values) { self.flush(group, now: now) }
            for subscription in Array(self.solo.values) { self.flush(subscription, now: now) }
            self.rejoinGroups(now: now)
        }
    }

    /// Attaches a stream. `jobs` restricts it to those job ids; `endsWithJob` closes it after that
    /// job's terminal `job` event. `access` (`JobAccess`) decides which jobs' events it may get at all: a `read` or
    /// `write` key's stream has a queue of its own admitting only its key's jobs (`EventFilter.owned`), never a group.
    func subscribe(writer: EventStreamWriter, stream: ResponseStream, jobs: Set<String>?, intervalMilliseconds: Int,
                   start: Start, endsWithJob: String? = nil, access: JobAccess = .administrator) {
        queue.async {
            let now = self.clock()
            let key = self.nextKey
            self.nextKey += 1
            let interval = max(intervalMilliseconds, SubscriberQueue.minimumIntervalMilliseconds)
            if case .live = start, jobs == nil, endsWithJob == nil, access.onlyKey == nil {
                // Whatever the group releases from now on is news to this stream (it has no id yet), so it
                // joins at the window's end; events allocated but not yet appended reach it through the group.
                let group = self.group(interval: interval)
                let subscription = Subscription(
                    key: key, delivery: .shared(interval: interval, cursor: group.window.nextSequence, lastID: self.log.newestID),
                    interval: interval, stream: stream, writer: writer, endsWithJob: nil)
                subscription.apiKey = access.owner
                group.members[key] = subscription
                self.attach(subscription)
                return
            }
            // Decide where the stream starts and what it missed before it exists, so that events
            // published meanwhile (on this same queue) can neither be lost nor delivered twice.
            var after = self.log.newestID
            var backlog: [ServerEvent] = []
            var reset = false
            switch start {
            case .live:
                break
            case .after(let lastID):
                switch self.log.replay(after: lastID, lastAllocated: self.ids.replayCeiling) {
                case .reset: reset = true
                case .events(let missed): after = lastID; backlog = missed
                }
            case .snapshot(let event):
                after = event.id - 1
                backlog = [event]
                if case .events(let later) = self.log.replay(after: event.id, lastAllocated: self.ids.replayCeiling) {
                    backlog += later
                }
            }
            let filter: EventFilter = access.onlyKey.map { .owned(by: $0, jobs: jobs) } ?? jobs.map { .jobs($0) } ?? .allJobs
            var own = SubscriberQueue(after: after, filter: filter, intervalMilliseconds: interval)
            for event in backlog { own.offer(event, now: now) }
            let subscription = Subscription(key: key, delivery: .own(own), interval: interval, stream: stream, writer: writer,
                                            endsWithJob: endsWithJob)
            subscription.apiKey = access.owner
            self.solo[key] = subscription
            self.attach(subscription)
            if reset { self.fanout.send([SharedChunk(ServerEvent.reset().frame)], to: stream, key: key) }
            self.flush(subscription, now: now)
        }
    }

    /// Waits until the fan-out has written what it was handed before (tests that drive streams by hand).
    func settleFanout() {
        fanout.settle()
    }

    /// Ends the streams opened with an API key (it was revoked); returns once the hub decided it.
    func closeStreams(ofKey keyID: String) {
        defer { fanout.settle() }
        queue.sync {
            for subscription in subscriptions.values where subscription.apiKey == keyID { close(subscription) }
        }
    }

    /// Ends every stream (shutdown).
    func closeAll() {
        defer { fanout.settle() }
        queue.sync {
            for subscription in subscriptions.values { close(subscription) }
            subscriptions.removeAll()
            intervals.removeAll()
            solo.removeAll()
            groups.removeAll()
            timer?.cancel()
            timer = nil
            heartbeat?.cancel()
            heartbeat = nil
        }
    }

    // MARK: Subscriptions (on `queue`)

    private func group(interval: Int) -> Group {
        if let group = groups[interval] { return group }
        let group = Group(interval: interval, after: log.newestID, windowBytes: windowBytes)
        groups[interval] = group
        return group
    }

    private func attach(_ subscription: Subscription) {
        dispatchPrecondition(condition: .onQueue(queue))
        subscriptions[subscription.key] = subscription
        countLock.lock(); count += 1; countLock.unlock()
        countInterval(subscription.interval, by: 1)
        let key = subscription.key
        subscription.stream.onClose { [weak self] in
            guard let self else { return }
            self.queue.async { self.drop(key) }
        }
    }

    private func close(_ subscription: Subscription) {
        guard !subscription.closed else { return }
        subscription.closed = true
        fanout.close(subscription.writer, key: subscription.key)
        drop(subscription.key)
    }

    private func drop(_ key: Int) {
        guard let subscription = subscriptions.removeValue(forKey: key) else { return }
        subscription.closed = true
        switch subscription.delivery {
        case .shared(let interval, _, _):
            if let group = groups[interval] {
                group.members[key] = nil
                if group.members.isEmpty { groups[interval] = nil }
            }
        case .own:
            solo[key] = nil
        }
        countLock.lock(); count -= 1; countLock.unlock()
        countInterval(subscription.interval, by: -1)
    }

    private func countInterval(_ interval: Int, by change: Int) {
        let finest = intervals.keys.min()
        intervals[interval, default: 0] += change
        if intervals[interval] == 0 { intervals[interval] = nil }
        let now = intervals.keys.min()
        if now != finest { onFinestIntervalChange?(now) }
    }

    // MARK: Shared delivery (on `queue`)

    /// Takes what the group's queue releases, adds it to the window as one batch, and sends it to every
    /// member that can take it.
    private func flush(_ group: Group, now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        let ready = group.schedule.take(now: now, writable: true)
        if let last = ready.last {
            let chunk: SharedChunk
            if ready.count == 1 {
                chunk = SharedChunk(last.frame)
            } else {
                var joined: [UInt8] = []
                joined.reserveCapacity(ready.reduce(0) { $0 + $1.frame.count })
                for event in ready { joined += event.frame }
                chunk = SharedChunk(joined)
            }
            let sequence = group.window.append(chunk, lastID: last.id)
            var current = [[ResponseStream]](repeating: [], count: fanout.shardCount)
            var behind: [Subscription] = []
            for subscription in group.members.values {
                guard case .shared(let interval, let cursor, _) = subscription.delivery else { continue }
                if cursor == sequence, !subscription.stream.isClosed,
                   subscription.stream.bufferedByteCount < sharedHighWater {
                    subscription.delivery = .shared(interval: interval, cursor: sequence + 1, lastID: last.id)
                    current[fanout.shard(of: subscription.key)].append(subscription.stream)
                } else {
                    behind.append(subscription)
                }
            }
            fanout.send([chunk], to: current, rotation: nextRotation())
            for subscription in behind { catchUp(subscription, in: group) }
        }
        if let due = group.schedule.nextDueTime {
            // A hair late, so that the timer never fires just before the grid instant it aims at.
            schedule(at: due + 0.002)
        }
    }

    /// Sends a member the batches it missed, or resynchronizes it when it is owed too much.
    private func catchUp(_ subscription: Subscription, in group: Group) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !subscription.closed, case .shared(let interval, let cursor, let lastID) = subscription.delivery else { return }
        if subscription.stream.isClosed { drop(subscription.key); return }
        guard cursor < group.window.nextSequence else { return }
        guard subscription.stream.bufferedByteCount < sharedHighWater else {
            waitForDrain(subscription, threshold: sharedHighWater / 4)
            return
        }
        guard let pending = group.window.pending(from: cursor), pending.byteCount <= resyncBytes,
              let newest = pending.batches.last else {
            resync(subscription, after: lastID)
            return
        }
        subscription.delivery = .shared(interval: interval, cursor: group.window.nextSequence, lastID: newest.lastID)
        fanout.send(pending.batches.compactMap(\.chunk), to: subscription.stream, key: subscription.key)   // shared, not copied
    }

    /// Moves a member that fell behind onto a queue of its own, filled from the log as a reconnection
    /// after `lastID` would be (its missed progress coalesced); closes it when the log cannot replay that far.
    private func resync(_ subscription: Subscription, after lastID: Int64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard case .shared(let interval, _, _) = subscription.delivery else { return }
        switch log.replay(after: lastID, lastAllocated: ids.replayCeiling) {
        case .reset:
            logger.notice("closing an event stream that fell too far behind")
            close(subscription)
        case .events(let missed):
            if let group = groups[interval] {
                group.members[subscription.key] = nil
                if group.members.isEmpty { groups[interval] = nil }
            }
            let now = clock()
            var own = SubscriberQueue(after: lastID, filter: .allJobs, intervalMilliseconds: interval, alignedToGrid: true)
            for event in missed { own.offer(event, now: now) }
            subscription.delivery = .own(own)
            subscription.rejoins = interval
            solo[subscription.key] = subscription
            flush(subscription, now: now)
        }
    }

    /// Moves resynchronized streams that have caught up back into their group, at its window's end.
    ///
    /// Safe only when neither side holds anything back: the stream was offered every event the group was
    /// and has nothing pending, so it has every event up to the log's newest id it should have; the group
    /// has nothing pending either, so its next batch holds only newer ids (no duplicate, order kept). And
    /// the group must have sent each job's progress no earlier than the stream's queue did (`interval`).
    private func rejoinGroups(now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        for subscription in Array(solo.values) {
            guard let interval = subscription.rejoins, !subscription.closed, !subscription.waitingForDrain,
                  subscription.outbox.isEmpty, case .own(let own) = subscription.delivery, !own.hasPending,
                  let group = groups[interval], !group.schedule.hasPending,
                  own.mayHandOver(to: group.schedule, now: now),
                  subscription.stream.bufferedByteCount < sharedHighWater else { continue }
            solo[subscription.key] = nil
            subscription.rejoins = nil
            subscription.delivery = .shared(interval: interval, cursor: group.window.nextSequence, lastID: own.lastDeliveredID)
            group.members[subscription.key] = subscription
        }
    }

    /// Continues `subscription` once its stream holds less than `threshold` unsent bytes; with `afterWrites`, judged
    /// only once the fan-out has handed the stream what this queue sent it (not yet counted before).
    private func waitForDrain(_ subscription: Subscription, threshold: Int, afterWrites: Bool = false) {
        guard !subscription.waitingForDrain else { return }
        subscription.waitingForDrain = true
        let key = subscription.key
        let stream = subscription.stream
        if afterWrites {
            fanout.afterWrites(key: key) { [weak self] in self?.continueWhenDrained(key, stream: stream, threshold: threshold) }
        } else {
            continueWhenDrained(key, stream: stream, threshold: threshold)
        }
    }

    private func continueWhenDrained(_ key: Int, stream: ResponseStream, threshold: Int) {
        stream.onDrain(threshold: threshold) { [weak self] in
            guard let self else { return }
            self.queue.async {
                guard let subscription = self.subscriptions[key] else { return }
                subscription.waitingForDrain = false
                switch subscription.delivery {
                case .shared(let interval, _, _):
                    if let group = self.groups[interval] { self.catchUp(subscription, in: group) }
                case .own:
                    self.flush(subscription, now: self.clock())
                }
            }
        }
    }

    // MARK: Private delivery (on `queue`)

    private func flush(_ subscription: Subscription, now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !subscription.closed, case .own(var own) = subscription.delivery else { return }
        if subscription.stream.isClosed { drop(subscription.key); return }
        guard !subscription.waitingForDrain, subscription.stream.bufferedByteCount < highWater else {
            if own.isTooFarBehind {
                logger.notice("closing an event stream that fell too far behind")
                close(subscription)
                return
            }
            waitForDrain(subscription, threshold: highWater / 4)
            return
        }
        if subscription.outbox.isEmpty {
            subscription.delivery = .own(SubscriberQueue(after: 0))   // keep `own` uniquely referenced
            subscription.outbox = own.take(now: now, writable: true)[...]
            subscription.delivery = .own(own)
        }
        if !subscription.outbox.isEmpty {
            if handOutbox(subscription) { close(subscription); return }
            if !subscription.outbox.isEmpty {
                waitForDrain(subscription, threshold: highWater / 4, afterWrites: true)
                return
            }
        }
        if let due = own.nextDueTime { schedule(at: due) }
    }

    /// Hands the fan-out up to `highWater` bytes of the subscription's outbox, in chunks of up to `chunkBytes`.
    /// Returns true when the stream ends after them (its job's terminal event).
    private func handOutbox(_ subscription: Subscription) -> Bool {
        var chunks: [SharedChunk] = []
        var handed = 0
        var ends = false
        while handed < highWater, !ends, !subscription.outbox.isEmpty {
            var bytes: [UInt8] = []
            while let event = subscription.outbox.first, bytes.isEmpty || bytes.count + event.frame.count <= chunkBytes {
                subscription.outbox.removeFirst()
                bytes.append(contentsOf: event.frame)
                if let job = subscription.endsWithJob, event.jobID == job, event.closesJobStream {
                    ends = true
                    break
                }
            }
            handed += bytes.count
            chunks.append(SharedChunk(bytes))
        }
        fanout.send(chunks, to: subscription.stream, key: subscription.key)
        if ends { subscription.outbox = [] }
        return ends
    }

    // MARK: Timers (on `queue`)

    private func schedule(at due: Double) {
        if let current = timerDue, current <= due { return }
        timerDue = due
        if timer == nil {
            let source = DispatchSource.makeTimerSource(queue: queue)
            source.setEventHandler { [weak self] in self?.tick() }
            source.activate()
            timer = source
        }
        let delay = max(0, due - clock())
        timer?.schedule(deadline: .now() + delay, leeway: .milliseconds(10))
    }

    private func tick() {
        timerDue = nil
        let now = clock()
        for group in Array(groups.values) { flush(group, now: now) }
        for subscription in Array(solo.values) { flush(subscription, now: now) }
        rejoinGroups(now: now)
    }

    private func ping() {
        dispatchPrecondition(condition: .onQueue(queue))
        var streams = [[ResponseStream]](repeating: [], count: fanout.shardCount)
        for subscription in subscriptions.values where !subscription.closed {
            streams[fanout.shard(of: subscription.key)].append(subscription.stream)
        }
        fanout.send([EventHub.pingChunk], to: streams, rotation: nextRotation())
    }

    /// A different start for each round, so that no stream is always served last.
    private func nextRotation() -> Int {
        rotation &+= 7_919
        return rotation
    }

    private static let pingChunk = SharedChunk(Array(": ping\n\n".utf8))
}

extension DispatchTime {
    /// Monotonic seconds, for timers and rate decisions.
    var seconds: Double { Double(uptimeNanoseconds) / 1e9 }
}
