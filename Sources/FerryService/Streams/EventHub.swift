import Dispatch
import FerryHTTP
import Foundation
import Logging

/// Delivers published events to every open event stream.
///
/// Owns, all on its serial `queue`: the `EventLog` (the replay window), the `SubscriberRegistry` (groups and private
/// streams) and every `EventSubscription`'s delivery state. Publishing never waits for a subscriber.
///
/// Three ways of feeding a stream (`EventSubscription.Delivery`):
/// - **Shared** (the common case: a live stream of all jobs, `GET /api/v1/events` without
///   `Last-Event-ID`): streams with the same `interval` form a `SubscriberGroup` with one `SubscriberQueue` and
///   one `FanoutWindow`. Each batch the group releases is serialized and framed once into one `SharedChunk` that
///   every member is sent (shared, not copied) by the `EventFanout`, off this queue; a member keeps only a cursor
///   into the window. A member whose socket buffer is above `sharedHighWater` keeps its cursor and is sent the
///   missed batches when it drains; if by then it is owed more than `resyncBytes`, or its cursor fell out of the
///   window, it is resynchronized: it reads the log from its last id (as a `Last-Event-ID` reconnection would),
///   and rejoins its group once it has caught up and neither side holds anything back (`rejoinGroups`).
/// - **Own queue** (filtered and per-job streams that keep up): one `SubscriberQueue` per stream, offered every event,
///   written while the stream's socket buffer is below `highWater`.
/// - **Log** (a stream that resumed with `Last-Event-ID`, was resynchronized, or whose socket fell behind): it keeps
///   only its position and is handed the next page of the log (`EventLog.page`, `highWater` bytes) each time its
///   socket drains, then goes back to a queue of its own once a page reaches the log's end. So a slow subscriber
///   costs its position and one page, never a private copy of what it missed; if the log evicted events after its
///   position, the stream is closed and its client resumes with `Last-Event-ID` (and is told to `reset`).
///
/// One timer (`HubTimer`), running only while some progress is held back by an `interval`, flushes what has become
/// due; a group's progress falls due on a grid of its interval (`SubscriberQueue.grid`) so that the progress of many
/// jobs goes out in one batch. A second timer writes the `: ping` heartbeat to every stream.
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

    let queue = DispatchQueue(label: "ferry.events")
    private let fanout: EventFanout
    /// Where the next group batch starts its round over each shard's members (see `EventFanout.send`).
    private var rotation = 0
    private let ids: EventIDAllocator
    private let logger: Logger
    private var log: EventLog
    private let registry = SubscriberRegistry()
    private var nextKey = 0
    /// Listeners given every published event, in order, on this queue (aria2's notifications, `Aria2Notifier`).
    private var taps: [@Sendable ([ServerEvent]) -> Void] = []
    private lazy var timer = HubTimer(queue: queue, clock: clock) { [weak self] in self?.tick() }
    private var heartbeat: DispatchSourceTimer?
    private let clock: @Sendable () -> Double
    /// Bytes a private stream may have unwritten in its socket buffer before the hub stops feeding it (it then reads
    /// the log from its position once drained); also the size of a log page and the most it is handed at once. What
    /// a slow subscriber costs is about twice this (its stream's and its connection's buffers): at 256 KiB, 50 slow
    /// all-job subscribers of the load suite held some 25 MB, which swung RSS by as much.
    private let highWater = 64 * 1024
    /// The largest chunk a private stream is handed (several events framed together; an event larger goes alone).
    private let chunkBytes = 32 * 1024
    /// The same for a group member, lower: a member held back costs only its cursor, whereas bytes handed
    /// to its connection are copied there, and thousands of members may be slow at once.
    private let sharedHighWater = 16 * 1024
    /// Bytes of missed batches beyond which a returning slow member is resynchronized from the log.
    private let resyncBytes = 64 * 1024
    /// Bytes of batches each group keeps for its slow members.
    private let windowBytes = 512 * 1024

    /// Told the finest interval any open stream asks for (milliseconds; nil when none is open) whenever it
    /// changes, so that progress is sampled at least that often. Called on the hub's queue; set before streams open.
    var onFinestIntervalChange: (@Sendable (Int?) -> Void)? {
        get { registry.onFinestIntervalChange }
        set { registry.onFinestIntervalChange = newValue }
    }

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
        gauges.renew(log: log, registry: registry, now: nil)
    }

    deinit {
        heartbeat?.cancel()
    }

    /// Open streams (read from any thread, for metrics).
    var subscriberCount: Int { registry.count }
    /// The figures `/metrics` shows, from any thread (the accessors below wait for the hub's queue: tests).
    let gauges = HubGauges()

    /// Group-fed streams and private streams' figures as of now, waiting for the queue (tests; `/metrics`: `gauges`).
    var sharedSubscriberCount: Int { queue.sync { registry.sharedCount } }
    var privateFigures: (readingLog: Int, heldEvents: Int) { queue.sync { registry.privateFigures } }

    /// Adds a listener given every event published from now on, in order, on the hub's queue; it must not block.
    func tap(_ listener: @escaping @Sendable ([ServerEvent]) -> Void) {
        queue.async { self.taps.append(listener) }
    }

    /// Appends events (in id order) to the log and offers them to every group and to every private stream that
    /// keeps up (a stream reading the log finds them there).
    func publish(_ events: [ServerEvent]) {
        queue.async {
            for tap in self.taps { tap(events) }
            let now = self.clock()
            var offered: [Int: EventSubscription] = [:]
            for event in events {
                self.log.append(event)
                for group in self.registry.groups.values { group.schedule.offer(event, now: now) }
                guard let jobID = event.jobID else { continue }   // (only `reset` has none, and it is never queued)
                self.registry.forEachSolo(receiving: jobID) { subscription in
                    guard case .own(var queue) = subscription.delivery else { return }
                    subscription.delivery = .log(after: 0)   // keep `queue` uniquely referenced
                    if queue.offer(event, now: now) { offered[subscription.key] = subscription }
                    subscription.delivery = .own(queue)
                }
            }
            // Only those offered something (due progress is the timer's, `tick`; the rest continue when drained).
            self.flushAll(now: now, streams: Array(offered.values))
            self.gauges.renew(log: self.log, registry: self.registry, now: now)
        }
    }

    /// Attaches a stream. `jobs` restricts it to those job ids; `endsWithJob` closes it after that
    /// job's terminal `job` event. `access` (`JobAccess`) decides which jobs' events it may get at all: a `read` or
    /// `write` key's stream is never in a group and admits only its key's jobs (`EventFilter.owned`).
    func subscribe(writer: EventStreamWriter, stream: ResponseStream, jobs: Set<String>?, intervalMilliseconds: Int,
                   start: Start, endsWithJob: String? = nil, access: JobAccess = .administrator) {
        queue.async {
            let key = self.nextKey
            self.nextKey += 1
            let interval = max(intervalMilliseconds, SubscriberQueue.minimumIntervalMilliseconds)
            if case .live = start, jobs == nil, endsWithJob == nil, access.onlyKey == nil {
                // Whatever the group releases from now on is news to this stream (it has no id yet), so it
                // joins at the window's end; events allocated but not yet appended reach it through the group.
                let group = self.registry.group(interval: interval, after: self.log.newestID, windowBytes: self.windowBytes)
                let delivery = EventSubscription.Delivery.shared(interval: interval, cursor: group.window.nextSequence,
                                                                 lastID: self.log.newestID)
                self.attach(EventSubscription(key: key, delivery: delivery, interval: interval, filter: .allJobs,
                                              stream: stream, writer: writer, endsWithJob: nil), apiKey: access.owner)
                return
            }
            // Decide where the stream starts before it exists, so that events published meanwhile (on this same
            // queue) can neither be lost nor delivered twice.
            let filter: EventFilter = access.onlyKey.map { .owned(by: $0, jobs: jobs) } ?? jobs.map { .jobs($0) } ?? .allJobs
            let (delivery, outbox, reset) = EventSubscription.privateStart(start, filter: filter, interval: interval,
                                                                           log: self.log, lastAllocated: self.ids.replayCeiling)
            let subscription = EventSubscription(key: key, delivery: delivery, interval: interval, filter: filter,
                                                 stream: stream, writer: writer, endsWithJob: endsWithJob)
            subscription.outbox = outbox[...]
            self.attach(subscription, apiKey: access.owner)
            if reset { self.fanout.send([SharedChunk(ServerEvent.reset().frame)], to: stream, key: key) }
            self.flush(subscription, now: self.clock())
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
            for subscription in registry.all.values where subscription.apiKey == keyID { close(subscription) }
        }
    }

    /// Ends every stream (shutdown).
    func closeAll() {
        defer { fanout.settle() }
        queue.sync {
            for subscription in registry.all.values { close(subscription) }
            registry.removeAll()
            timer.cancel()
            heartbeat?.cancel()
            heartbeat = nil
        }
    }

    // MARK: Subscriptions (on `queue`)

    private func attach(_ subscription: EventSubscription, apiKey: String?) {
        dispatchPrecondition(condition: .onQueue(queue))
        subscription.apiKey = apiKey
        registry.add(subscription)
        let key = subscription.key
        subscription.stream.onClose { [weak self] in
            guard let self else { return }
            self.queue.async { self.drop(key) }
        }
    }

    private func close(_ subscription: EventSubscription) {
        guard !subscription.closed else { return }
        subscription.closed = true
        fanout.close(subscription.writer, key: subscription.key)
        drop(subscription.key)
    }

    private func drop(_ key: Int) {
        registry.remove(key)?.closed = true
    }

    /// Flushes the groups and `streams` (nil: every private one); caught-up streams rejoin their groups.
    private func flushAll(now: Double, streams: [EventSubscription]? = nil) {
        for group in Array(registry.groups.values) { flush(group, now: now) }
        for subscription in streams ?? Array(registry.solo.values) { flush(subscription, now: now) }
        rejoinGroups(now: now)
    }

    // MARK: Shared delivery (on `queue`)

    /// Takes what the group releases, as one batch of its window, and sends it to every member that can take it.
    private func flush(_ group: SubscriberGroup, now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        if let batch = group.release(now: now) {
            let (current, behind) = group.advance(to: batch, highWater: sharedHighWater, shards: fanout.shardCount,
                                                  shardOf: fanout.shard(of:))
            fanout.send([batch.chunk], to: current, rotation: nextRotation())
            for subscription in behind { catchUp(subscription, in: group) }
        }
        if let due = group.schedule.nextDueTime {
            // A hair late, so that the timer never fires just before the grid instant it aims at.
            timer.schedule(at: due + 0.002)
        }
    }

    /// Sends a member the batches it missed, or resynchronizes it when it is owed too much.
    private func catchUp(_ subscription: EventSubscription, in group: SubscriberGroup) {
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

    /// Moves a member that fell behind to reading the log after `lastID`, as a reconnection after it would;
    /// closes it when the log cannot replay that far.
    private func resync(_ subscription: EventSubscription, after lastID: Int64) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard case .shared(let interval, _, _) = subscription.delivery else { return }
        guard log.canReplay(after: lastID, lastAllocated: ids.replayCeiling) else {
            logger.notice("closing an event stream that fell behind the replay log (its client resumes with Last-Event-ID)")
            close(subscription)
            return
        }
        registry.move(subscription, to: .log(after: lastID))
        subscription.rejoins = interval
        flush(subscription, now: clock())
    }

    /// Moves resynchronized streams that have caught up back into their group, at its window's end.
    ///
    /// Safe only when neither side holds anything back: the stream was offered every event the group was
    /// and has nothing pending, so it has every event up to the log's newest id it should have; the group
    /// has nothing pending either, so its next batch holds only newer ids (no duplicate, order kept). And
    /// the group must have sent each job's progress no earlier than the stream's queue did (`interval`).
    private func rejoinGroups(now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        for subscription in Array(registry.soloAnyJob.values) {   // (a stream that left a group follows every job)
            guard let interval = subscription.rejoins, !subscription.closed, !subscription.waitingForDrain,
                  subscription.outbox.isEmpty, case .own(let own) = subscription.delivery, !own.hasPending,
                  let group = registry.groups[interval], !group.schedule.hasPending,
                  own.mayHandOver(to: group.schedule, now: now),
                  subscription.stream.bufferedByteCount < sharedHighWater else { continue }
            subscription.rejoins = nil
            registry.move(subscription, to: .shared(interval: interval, cursor: group.window.nextSequence,
                                                    lastID: own.lastDeliveredID))
        }
    }

    /// Continues `subscription` once its stream holds less than `threshold` unsent bytes; with `afterWrites`, judged
    /// only once the fan-out has handed the stream what this queue sent it (not yet counted before).
    private func waitForDrain(_ subscription: EventSubscription, threshold: Int, afterWrites: Bool = false) {
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
                guard let subscription = self.registry.all[key] else { return }
                subscription.waitingForDrain = false
                switch subscription.delivery {
                case .shared(let interval, _, _):
                    if let group = self.registry.groups[interval] { self.catchUp(subscription, in: group) }
                case .own, .log:
                    self.flush(subscription, now: self.clock())
                }
            }
        }
    }

    // MARK: Private delivery (on `queue`)

    /// Hands a private stream what it is owed, a bounded piece at a time; a stream whose socket is behind stops
    /// being offered events and reads the log from its position once drained.
    private func flush(_ subscription: EventSubscription, now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !subscription.closed else { return }
        if subscription.stream.isClosed { drop(subscription.key); return }
        guard !subscription.waitingForDrain, subscription.stream.bufferedByteCount < highWater else {
            subscription.park()
            waitForDrain(subscription, threshold: highWater / 4)
            return
        }
        if subscription.outbox.isEmpty,
           !subscription.refill(from: log, lastAllocated: ids.replayCeiling, pageBytes: highWater, now: now) {
            logger.notice("closing an event stream that fell behind the replay log (its client resumes with Last-Event-ID)")
            close(subscription)
            return
        }
        if !subscription.outbox.isEmpty {
            let (chunks, ends) = subscription.takeChunks(limit: highWater, chunkBytes: chunkBytes)
            fanout.send(chunks, to: subscription.stream, key: subscription.key)
            if ends { close(subscription); return }
        }
        switch subscription.delivery {
        case .log:
            waitForDrain(subscription, threshold: highWater / 4, afterWrites: true)
        case .own where !subscription.outbox.isEmpty:
            subscription.park()
            waitForDrain(subscription, threshold: highWater / 4, afterWrites: true)
        case .own(let own):
            if let due = own.nextDueTime { timer.schedule(at: due) }
        case .shared:
            break
        }
    }

    // MARK: Timers (on `queue`)

    private func tick() {
        let now = clock()
        flushAll(now: now)
        gauges.renew(log: log, registry: registry, now: now)
    }

    private func ping() {
        dispatchPrecondition(condition: .onQueue(queue))
        gauges.renew(log: log, registry: registry, now: nil)
        var streams = [[ResponseStream]](repeating: [], count: fanout.shardCount)
        for subscription in registry.all.values where !subscription.closed {
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
