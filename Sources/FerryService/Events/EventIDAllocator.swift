import Foundation

/// Hands out event ids: increasing integers, unique across the whole server and across restarts.
///
/// Thread-safe: one `NSLock` guards the single counter (the whole mutable state), so `next()` may be
/// called from any thread or task; each call returns a new id greater than every id returned before.
///
/// Restarts: ids keep increasing because the service persists a high-water mark and starts the next
/// run after it. Start a run after a mark that no previous run issued (`persistedHighWater + 1`, and
/// persist that new base before serving): ``EventLog`` accepts `Last-Event-ID == base` as "nothing
/// missed in this run" (it is what `GET /api/v1/jobs` reports as `Ferry-Event-Id` before the first
/// event) and answers `reset` to every id below it, so a client of a previous run always re-lists.
///
/// Ordering caveat: ids are ordered by allocation, but an id only reaches subscribers once its event is
/// appended to the ``EventLog`` on the events queue, which requires increasing ids. The service must
/// therefore append in allocation order (e.g. allocate and enqueue the append in one serial context).
public final class EventIDAllocator: @unchecked Sendable {
    /// The mark this run started after: the first id is `base + 1`.
    public let base: Int64
    /// Guards `last`, and nothing else.
    private let lock = NSLock()
    private var last: Int64

    /// - Parameter base: an id no earlier run issued (see the type's documentation); `>= 0`.
    public init(startingAfter base: Int64) {
        precondition(base >= 0, "event ids are positive")
        self.base = base
        self.last = base
    }

    /// A new id, greater than every id this allocator returned before.
    public func next() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        precondition(last < Int64.max, "event ids exhausted")
        last += 1
        return last
    }

    /// The greatest id handed out so far (`base` before the first `next()`). Every id up to this one
    /// has been issued, though its event may not be appended to the log yet.
    public var lastAllocated: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return last
    }
}
