import Dispatch
import FerryHTTP
import Foundation
import Logging

/// Delivers published events to every open event stream.
///
/// Owns the `EventLog` (the replay window) and one `SubscriberQueue` per stream, all on its serial
/// `queue`. Publishing never waits for a subscriber: events are offered to each queue and written
/// only while that stream's socket buffer is below a high-water mark; a stream that stays behind
/// has its progress coalesced and is closed once `SubscriberQueue.isTooFarBehind` (the client then
/// resumes with `Last-Event-ID`). One timer, running only while some progress is held back by an
/// `interval`, flushes what has become due.
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

    private final class Subscription {
        let key: Int
        var queue: SubscriberQueue
        let stream: ResponseStream
        let writer: EventStreamWriter
        /// The job whose terminal event ends this stream (per-job streams).
        let endsWithJob: String?
        var waitingForDrain = false
        var closed = false

        init(key: Int, queue: SubscriberQueue, stream: ResponseStream, writer: EventStreamWriter, endsWithJob: String?) {
            self.key = key
            self.queue = queue
            self.stream = stream
            self.writer = writer
            self.endsWithJob = endsWithJob
        }
    }

    let queue = DispatchQueue(label: "ferry.events")
    private let ids: EventIDAllocator
    private let logger: Logger
    private var log: EventLog
    private var subscriptions: [Int: Subscription] = [:]
    private var nextKey = 0
    private var timer: DispatchSourceTimer?
    private var timerDue: Double?
    private let clock: @Sendable () -> Double
    /// Bytes a stream may have unwritten in its socket buffer before the hub holds events back.
    private let highWater = 256 * 1024
    private let countLock = NSLock()
    private var count = 0

    init(ids: EventIDAllocator, logger: Logger, windowCapacity: Int = 16_384,
         clock: @escaping @Sendable () -> Double = { DispatchTime.now().seconds }) {
        self.ids = ids
        self.logger = logger
        self.log = EventLog(startingAfter: ids.base, capacity: windowCapacity)
        self.clock = clock
    }

    /// Open streams (read from any thread, for metrics).
    var subscriberCount: Int {
        countLock.lock(); defer { countLock.unlock() }
        return count
    }

    /// Appends events (in id order) to the log and offers them to every stream.
    func publish(_ events: [ServerEvent]) {
        queue.async {
            let now = self.clock()
            for event in events {
                self.log.append(event)
                for subscription in self.subscriptions.values {
                    subscription.queue.offer(event, now: now)
                }
            }
            for subscription in Array(self.subscriptions.values) { self.flush(subscription, now: now) }
        }
    }

    /// Attaches a stream. `jobs` restricts it to those job ids; `endsWithJob` closes it after that
    /// job's terminal `job` event.
    func subscribe(writer: EventStreamWriter, stream: ResponseStream, jobs: Set<String>?, intervalMilliseconds: Int,
                   start: Start, endsWithJob: String? = nil) {
        queue.async {
            let now = self.clock()
            // Decide where the stream starts and what it missed before it exists, so that events
            // published meanwhile (on this same queue) can neither be lost nor delivered twice.
            var after = self.log.newestID
            var backlog: [ServerEvent] = []
            var reset = false
            switch start {
            case .live:
                break
            case .after(let lastID):
                switch self.log.replay(after: lastID, lastAllocated: self.ids.lastAllocated) {
                case .reset: reset = true
                case .events(let missed): after = lastID; backlog = missed
                }
            case .snapshot(let event):
                after = event.id - 1
                backlog = [event]
                if case .events(let later) = self.log.replay(after: event.id, lastAllocated: self.ids.lastAllocated) {
                    backlog += later
                }
            }
            let filter: EventFilter = jobs.map { .jobs($0) } ?? .allJobs
            let key = self.nextKey
            self.nextKey += 1
            let subscription = Subscription(
                key: key, queue: SubscriberQueue(after: after, filter: filter, intervalMilliseconds: intervalMilliseconds),
                stream: stream, writer: writer, endsWithJob: endsWithJob)
            self.subscriptions[key] = subscription
            self.countLock.lock(); self.count += 1; self.countLock.unlock()
            stream.onClose { [weak self] in
                guard let self else { return }
                self.queue.async { self.drop(key) }
            }
            if reset { stream.write(ServerEvent.reset().frame) }
            for event in backlog { subscription.queue.offer(event, now: now) }
            self.flush(subscription, now: now)
        }
    }

    /// Ends every stream (shutdown).
    func closeAll() {
        queue.sync {
            for subscription in subscriptions.values { close(subscription) }
            subscriptions.removeAll()
            timer?.cancel()
            timer = nil
        }
    }

    // MARK: Delivery (on `queue`)

    private func flush(_ subscription: Subscription, now: Double) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !subscription.closed else { return }
        if subscription.stream.isClosed { drop(subscription.key); return }
        guard subscription.stream.bufferedByteCount < highWater else {
            if subscription.queue.isTooFarBehind {
                logger.notice("closing an event stream that fell too far behind")
                close(subscription)
                return
            }
            if !subscription.waitingForDrain {
                subscription.waitingForDrain = true
                let key = subscription.key
                subscription.stream.onDrain(threshold: highWater / 4) { [weak self] in
                    guard let self else { return }
                    self.queue.async {
                        guard let subscription = self.subscriptions[key] else { return }
                        subscription.waitingForDrain = false
                        self.flush(subscription, now: self.clock())
                    }
                }
            }
            return
        }
        let ready = subscription.queue.take(now: now, writable: true)
        if !ready.isEmpty {
            var bytes: [UInt8] = []
            var ends = false
            for event in ready {
                bytes.append(contentsOf: event.frame)
                if let job = subscription.endsWithJob, event.jobID == job, event.closesJobStream {
                    ends = true
                    break
                }
            }
            subscription.stream.write(bytes)
            if ends { close(subscription); return }
        }
        if let due = subscription.queue.nextDueTime { schedule(at: due) }
    }

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
        for subscription in Array(subscriptions.values) { flush(subscription, now: now) }
    }

    private func close(_ subscription: Subscription) {
        guard !subscription.closed else { return }
        subscription.closed = true
        subscription.writer.close()
        drop(subscription.key)
    }

    private func drop(_ key: Int) {
        guard let subscription = subscriptions.removeValue(forKey: key) else { return }
        subscription.closed = true
        countLock.lock(); count -= 1; countLock.unlock()
    }
}

extension DispatchTime {
    /// Monotonic seconds, for timers and rate decisions.
    var seconds: Double { Double(uptimeNanoseconds) / 1e9 }
}
