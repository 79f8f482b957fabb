import Foundation

/// The recent history of events, from which a reconnecting client's missed events are replayed.
///
/// Owner: the service's events queue (the serial queue that appends events and feeds every
/// ``SubscriberQueue``). `EventLog` is a value type with no locking; keep the one instance in a
/// property of a type confined to that queue and mutate it only there.
///
/// What it keeps:
/// - a window of the newest `capacity` `job`/`removed` events, in id order (older ones are evicted);
/// - separately, the latest `progress` event of each job, only while it is newer than that job's last
///   `job` event (a `job` event carries the job's numbers, so it supersedes earlier progress) and
///   until the job is `removed`.
///
/// Invariants:
/// - appended ids increase strictly and are above `base` (precondition);
/// - every `job`/`removed` event with an id above `evictedThrough` (or `base` while nothing was
///   evicted) is in the window; so a replay after such an id is complete.
///
/// Replay rules (``replay(after:lastAllocated:)``), for the `Last-Event-ID` a client sends:
/// - `lastID < 0`: not an id → `reset`.
/// - `lastID > lastAllocated`: never issued by this server → `reset`.
/// - `lastID < base`: issued by a previous run, whose history this process does not have (and a
///   crash may have changed jobs without an event) → `reset`. `lastID == base` is valid: `base` is
///   never issued by a previous run (see ``EventIDAllocator``); it is what `Ferry-Event-Id` reports
///   before this run's first event.
/// - `lastID < evictedThrough`: some event after it was evicted → `reset`. `lastID == evictedThrough`
///   is valid (the client saw the newest evicted event, everything after it is kept).
/// - otherwise `.events`: every `job`/`removed` event after `lastID`, and each job's latest
///   non-superseded progress after `lastID`, merged in id order. `lastID` may be allocated but not
///   yet appended (the list already reflects it): the replay is then empty and the later events
///   arrive live, since they are appended in id order on the same queue.
public struct EventLog: Sendable {
    /// The answer to a reconnecting client.
    public enum Replay: Sendable, Equatable {
        /// The missed events, in increasing id order (possibly none).
        case events([ServerEvent])
        /// The client's `Last-Event-ID` cannot be replayed: send `event: reset`; the client re-lists.
        case reset
    }

    /// The default number of `job`/`removed` events kept.
    public static let defaultCapacity = 16_384

    /// The id this run started after (``EventIDAllocator/base``); appended ids are above it.
    public let base: Int64
    /// How many `job`/`removed` events the window keeps.
    public let capacity: Int

    /// The window: `storage[head...]` are the kept events, oldest first. Evicted events before `head`
    /// are dropped in batches of up to 1,024, so at most that many dead events are held, and an eviction
    /// costs `capacity / 1,024` element moves amortized (16 for the default window).
    private var storage: [ServerEvent] = []
    private var head = 0
    /// The latest progress of each job, newer than the job's last `job` event.
    private var progressByJob: [String: ServerEvent] = [:]

    /// The greatest id appended so far (`base` before the first append).
    public private(set) var newestID: Int64
    /// The greatest id of an evicted event; `nil` while nothing was evicted.
    public private(set) var evictedThrough: Int64?

    /// - Parameters:
    ///   - base: ``EventIDAllocator/base`` of this run.
    ///   - capacity: `job`/`removed` events kept for replay (at least 1).
    public init(startingAfter base: Int64, capacity: Int = EventLog.defaultCapacity) {
        precondition(capacity >= 1, "the window must keep at least one event")
        self.base = base
        self.capacity = capacity
        self.newestID = base
    }

    /// The number of `job`/`removed` events in the window.
    public var count: Int { storage.count - head }
    /// The id of the oldest `job`/`removed` event kept, if any.
    public var oldestKeptID: Int64? { head < storage.count ? storage[head].id : nil }
    /// The number of jobs whose latest progress is kept.
    public var progressCount: Int { progressByJob.count }

    /// The latest progress of `jobID` not superseded by a later `job` event, if any.
    public func latestProgress(forJob jobID: String) -> ServerEvent? { progressByJob[jobID] }

    /// Appends the next event. Its id must be above every id appended before (and above `base`).
    public mutating func append(_ event: ServerEvent) {
        precondition(event.kind != .reset, "a reset is never logged")
        precondition(event.id > newestID, "event ids must increase: \(event.id) after \(newestID)")
        newestID = event.id
        guard let jobID = event.jobID else { return }
        switch event.kind {
        case .progress:
            progressByJob[jobID] = event
        case .job, .removed:
            progressByJob[jobID] = nil
            storage.append(event)
            if count > capacity { evictOldest() }
        case .reset:
            break
        }
    }

    private mutating func evictOldest() {
        evictedThrough = storage[head].id
        head += 1
        // Not only once the dead events are half the storage: that held up to a second window of frames.
        if head >= min(1_024, capacity) {
            storage.removeFirst(head)
            head = 0
        }
    }

    /// What a client that last received `lastID` must be sent (see the type's replay rules).
    /// - Parameters:
    ///   - lastID: the client's `Last-Event-ID`.
    ///   - lastAllocated: ``EventIDAllocator/lastAllocated`` now (ids up to it were issued, even if
    ///     their events are not appended yet).
    public func replay(after lastID: Int64, lastAllocated: Int64) -> Replay {
        guard canReplay(after: lastID, lastAllocated: lastAllocated) else { return .reset }
        let window = storage[(firstIndex(after: lastID))...]
        let progress = progressByJob.values.filter { $0.id > lastID }.sorted { $0.id < $1.id }
        return .events(Self.merge(Array(window), progress))
    }

    /// A bounded piece of a replay, for a stream that reads the log from its own position (`EventHub`'s streams that
    /// fell behind or resume with `Last-Event-ID`) instead of holding a queue of its own.
    public struct Page: Sendable, Equatable {
        /// The events after the position that the filter admits, in increasing id order: `job`/`removed` events
        /// until about `maxBytes`, and each job's latest non-superseded progress with an id up to `through`.
        public var events: [ServerEvent]
        /// The id read through: the next page starts after it.
        public var through: Int64
        /// Whether the page reached the newest event appended (the reader has caught up: later events are live).
        public var reachedEnd: Bool
    }

    /// The next page of a replay after `lastID` for a reader with `filter`: the events `replay(after:lastAllocated:)`
    /// would answer (those the filter admits), from the oldest, until their frames reach `maxBytes` (at least one
    /// event when any is admitted). `nil` when that replay would be a `reset`: the reader cannot be served from here.
    /// Reading page after page (each after the last one's `through`) yields the replay's events once each, in order.
    public func page(after lastID: Int64, lastAllocated: Int64, filter: EventFilter, maxBytes: Int) -> Page? {
        guard canReplay(after: lastID, lastAllocated: lastAllocated) else { return nil }
        var index = firstIndex(after: lastID)
        var window: [ServerEvent] = []
        var bytes = 0
        while index < storage.count, bytes < maxBytes {
            let event = storage[index]
            if filter.admits(event) {
                window.append(event)
                bytes += event.frame.count
            }
            index += 1
        }
        let reachedEnd = index == storage.count
        let through = reachedEnd ? max(newestID, lastID) : storage[index - 1].id
        let progress = progressByJob.values
            .filter { $0.id > lastID && $0.id <= through && filter.admits($0) }
            .sorted { $0.id < $1.id }
        return Page(events: Self.merge(window, progress), through: through, reachedEnd: reachedEnd)
    }

    /// Whether a replay after `lastID` is complete from here (not a `reset`: see the type's rules).
    public func canReplay(after lastID: Int64, lastAllocated: Int64) -> Bool {
        if lastID < 0 || lastID < base || lastID > max(lastAllocated, newestID) { return false }
        if let evictedThrough, lastID < evictedThrough { return false }
        return true
    }

    /// The index in `storage` of the first kept event with an id above `lastID` (binary search).
    private func firstIndex(after lastID: Int64) -> Int {
        var low = head, high = storage.count
        while low < high {
            let middle = (low + high) / 2
            if storage[middle].id <= lastID { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Merges two id-sorted lists (whose ids are distinct) into one id-sorted list.
    static func merge(_ a: [ServerEvent], _ b: [ServerEvent]) -> [ServerEvent] {
        if b.isEmpty { return a }
        if a.isEmpty { return b }
        var result: [ServerEvent] = []
        result.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count && j < b.count {
            if a[i].id < b[j].id { result.append(a[i]); i += 1 } else { result.append(b[j]); j += 1 }
        }
        result += a[i...]
        result += b[j...]
        return result
    }
}
