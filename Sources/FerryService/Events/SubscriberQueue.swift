import Foundation

/// What one SSE subscriber is owed, and when: the per-connection delivery state machine.
///
/// Owner: the service's events queue, which keeps one `SubscriberQueue` per open event stream,
/// offers it every event it appends to the ``EventLog`` (after the replay), calls ``take(now:writable:)``
/// when the stream can accept bytes (after an offer, at ``nextDueTime``, and when the stream drains),
/// writes the returned frames in order, and closes the stream when ``isTooFarBehind``. A pure value:
/// no clock (`now` is seconds on the caller's monotonic clock), no I/O, no locking.
///
/// Delivery rules:
/// - Only events the ``EventFilter`` admits, and only ids above every id offered before (so a replay
///   followed by live events never duplicates one).
/// - `job` and `removed` events are all kept and go out at the next writable `take`.
/// - `progress` is coalesced per job: only the latest pending one is kept; a `job`/`removed` event of
///   the same job drops it (the job event carries the numbers). A job's progress goes out at most once
///   per `interval`: it is due when `now >= lastSent[job] + interval`, rounded up to the next multiple of
///   `grid` when the queue has one (a queue shared by many subscribers uses the interval itself, so that
///   the progress of many jobs falls due at the same instants and goes out in few batches: a job's
///   progress then goes out every one or two intervals).
/// - Order: `take` returns strictly increasing ids. A progress that is not due and has a smaller id
///   than a `job`/`removed` event going out cannot follow it: it is dropped (progress may be a subset)
///   and its job marked dirty (``dirtyJobIDs``) until something of that job is delivered; the job's
///   next progress goes out as soon as it is due, since `lastSent` did not move. Between progress
///   events nothing is dropped: a due progress waits behind a smaller-id one that is not due yet, at
///   most one `interval`, so a job's last progress is lost only to a `job`/`removed` event of another
///   job overtaking it.
/// - A delivered `removed` event forgets the job's send time (the job is gone).
///
/// Invariant: every id returned by `take` is greater than ``lastDeliveredID`` before the call, so a
/// subscriber never receives an id at or below one it already received.
///
/// Wiring, on the events queue: create the queue `after:` the client's `Last-Event-ID` (or the
/// log's `newestID` for a client without one, so events allocated but not yet appended still reach
/// it), offer it the ``EventLog`` replay, then call `take(now:writable: true)` and write the result
/// *before* consulting ``isTooFarBehind``: a replay can exceed the limits by itself (the log keeps up
/// to 16,384 job events), and judging it before the first write would close the stream on every
/// reconnection. `isTooFarBehind` is meant to measure what piles up while the stream is not writable.
public struct SubscriberQueue: Sendable {
    /// When a subscriber is too far behind to keep serving (the service then closes its stream and
    /// the client resumes with `Last-Event-ID`).
    public struct Limits: Sendable, Equatable {
        /// Pending `job`/`removed` events above which the subscriber is too far behind.
        public var maxPendingEvents: Int
        /// Pending frame bytes (all kinds) above which the subscriber is too far behind.
        public var maxPendingBytes: Int

        public init(maxPendingEvents: Int = 10_000, maxPendingBytes: Int = 8 * 1024 * 1024) {
            self.maxPendingEvents = maxPendingEvents
            self.maxPendingBytes = maxPendingBytes
        }
    }

    public static let defaultIntervalMilliseconds = 500
    public static let minimumIntervalMilliseconds = 100

    public let filter: EventFilter
    /// Minimum seconds between two progress events of one job.
    public let interval: Double
    /// Seconds; progress falls due only at multiples of it (`nil`: as soon as `interval` has passed).
    public let grid: Double?
    public let limits: Limits
    /// The greatest id returned by `take` (initially the id the subscriber starts after).
    public private(set) var lastDeliveredID: Int64
    /// The greatest id offered (initially the id the subscriber starts after); smaller offers are ignored.
    public private(set) var lastOfferedID: Int64
    /// Jobs whose pending progress was dropped because a later `job`/`removed` event overtook it and
    /// that have had nothing delivered since: this subscriber's numbers for them may be stale until
    /// their next progress or job event (the service may re-publish progress for them).
    public private(set) var dirtyJobIDs: Set<String> = []

    /// Pending `job`/`removed` events, in id order, and when the oldest became pending.
    private var pendingEvents: [ServerEvent] = []
    private var pendingEventsSince: Double = 0
    /// The latest pending progress per job, with when it was offered.
    private var pendingProgress: [String: (event: ServerEvent, offeredAt: Double)] = [:]
    /// Frame bytes of everything pending.
    public private(set) var pendingBytes = 0
    /// When each job's last progress went out (entries older than `interval` no longer matter).
    private var lastSent: [String: Double] = [:]
    private var lastSentPruneThreshold = 1_024

    /// - Parameters:
    ///   - lastID: the id the subscriber already has: its `Last-Event-ID`, or ``EventLog/newestID``
    ///     for a new subscriber. Offers at or below it are ignored.
    ///   - filter: the jobs it follows.
    ///   - intervalMilliseconds: the `interval` query parameter; raised to at least 100.
    ///   - limits: when to give up on a slow subscriber.
    ///   - alignedToGrid: progress falls due only at multiples of the interval (see ``grid``).
    public init(after lastID: Int64, filter: EventFilter = .allJobs,
                intervalMilliseconds: Int = SubscriberQueue.defaultIntervalMilliseconds, limits: Limits = Limits(),
                alignedToGrid: Bool = false) {
        self.filter = filter
        self.interval = Double(max(intervalMilliseconds, Self.minimumIntervalMilliseconds)) / 1_000
        self.grid = alignedToGrid ? interval : nil
        self.limits = limits
        self.lastDeliveredID = lastID
        self.lastOfferedID = lastID
    }

    /// `job`/`removed` events waiting to be written.
    public var pendingEventCount: Int { pendingEvents.count }
    /// Jobs with a progress event waiting to be written.
    public var pendingProgressCount: Int { pendingProgress.count }
    /// Whether anything is waiting.
    public var hasPending: Bool { !pendingEvents.isEmpty || !pendingProgress.isEmpty }

    /// Whether a subscriber fed by this queue until `now` may be fed by `other` from now on without any
    /// job's progress coming sooner than `interval` after the last one this queue sent: every progress this
    /// queue sent less than an interval ago, `other` sent too, at the same time or later. (Ids are the
    /// caller's business: see ``EventHub``.)
    public func mayHandOver(to other: SubscriberQueue, now: Double) -> Bool {
        lastSent.allSatisfy { job, sent in
            sent + interval <= now || (other.lastSent[job].map { $0 >= sent } ?? false)
        }
    }

    /// Too much is pending: the service should close the stream (the client resumes with `Last-Event-ID`).
    public var isTooFarBehind: Bool {
        pendingEvents.count > limits.maxPendingEvents || pendingBytes > limits.maxPendingBytes
    }

    /// Queues `event` if the filter admits it and its id is above every id offered before.
    /// - Returns: whether the event was queued.
    @discardableResult
    public mutating func offer(_ event: ServerEvent, now: Double) -> Bool {
        precondition(event.kind != .reset, "a reset is written directly, never queued")
        guard event.id > lastOfferedID else { return false }
        lastOfferedID = event.id
        guard filter.admits(event), let jobID = event.jobID else { return false }
        if let replaced = pendingProgress.removeValue(forKey: jobID) {
            pendingBytes -= replaced.event.frame.count
        }
        if event.kind == .progress {
            pendingProgress[jobID] = (event, now)
        } else {
            if pendingEvents.isEmpty { pendingEventsSince = now }
            pendingEvents.append(event)
        }
        pendingBytes += event.frame.count
        return true
    }

    /// When `take` will next return something (a time at or before `now` means: call it now); `nil`
    /// when nothing is pending. Meaningful while the stream is writable; otherwise wait for it to drain.
    public var nextDueTime: Double? {
        if !pendingEvents.isEmpty { return pendingEventsSince }
        guard let first = pendingProgress.values.min(by: { $0.event.id < $1.event.id }) else { return nil }
        return max(first.offeredAt, dueTime(of: first.event.jobID!))
    }

    /// The events to write now, in strictly increasing id order: every pending `job`/`removed` event,
    /// and the progress that is due and may precede or follow them (see the type's rules). Returns
    /// nothing and changes nothing when the stream is not `writable`.
    public mutating func take(now: Double, writable: Bool) -> [ServerEvent] {
        guard writable, hasPending else { return [] }
        let lastMandatoryID = pendingEvents.last?.id ?? Int64.min
        for event in pendingEvents {
            pendingBytes -= event.frame.count
            if event.kind == .removed { lastSent[event.jobID!] = nil }   // the job is gone
        }
        var sending: [ServerEvent] = []
        var dropped: [String] = []
        var blocked = false
        for (event, _) in pendingProgress.values.sorted(by: { $0.event.id < $1.event.id }) {
            let jobID = event.jobID!
            let due = now >= dueTime(of: jobID)
            if event.id < lastMandatoryID {
                if !due { dropped.append(jobID) }
            } else if blocked || !due {
                blocked = true
                continue   // stays pending
            }
            pendingProgress[jobID] = nil
            pendingBytes -= event.frame.count
            if due {
                sending.append(event)
                lastSent[jobID] = now
            }
        }
        let out = EventLog.merge(pendingEvents, sending)
        pendingEvents.removeAll(keepingCapacity: pendingEvents.count <= 1_024)
        // Delivered events clear a job's dirty mark; a drop marks it after, since whatever else of
        // that job goes out now is older than the dropped progress.
        for event in out { dirtyJobIDs.remove(event.jobID!) }
        dirtyJobIDs.formUnion(dropped)
        if let last = out.last {
            assert(out.first!.id > lastDeliveredID, "delivery must stay in increasing id order")
            lastDeliveredID = last.id
        }
        pruneLastSent(now: now)
        return out
    }

    /// The earliest time the job's next progress may go out. On a grid, a send made a little after a grid instant
    /// (the timer fires up to `gridSlack` late) counts as made at that instant, so that lateness never costs a
    /// whole extra interval.
    private func dueTime(of jobID: String) -> Double {
        guard let sent = lastSent[jobID] else { return -.infinity }
        guard let grid else { return sent + interval }
        return ((sent + interval - Self.gridSlack(interval)) / grid).rounded(.up) * grid
    }

    /// How late a grid instant's send may be and still count as made on the instant: 10 ms, or a tenth of a
    /// short interval.
    static func gridSlack(_ interval: Double) -> Double { min(0.010, interval / 10) }

    /// Forgets send times that no longer hold anything back, once the table has grown.
    private mutating func pruneLastSent(now: Double) {
        guard lastSent.count > lastSentPruneThreshold else { return }
        lastSent = lastSent.filter { now < $0.value + interval }
        lastSentPruneThreshold = max(1_024, lastSent.count * 2)
    }
}
