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
///
/// Several nodes (`ClusterEventID`): `job`/`removed` ids come from the database, scaled into blocks; the node's
/// `ClusterEventFeed` moves the counter to each such id (`advance(to:)`) and numbers its `progress` events inside the
/// current block (`nextInBlock()`), so that ids published by one node still increase strictly.
public final class EventIDAllocator: @unchecked Sendable {
    /// The mark this run started after: the first id is `base + 1`.
    public let base: Int64
    /// 1 on a single node; `ClusterEventID.block` with several (ids of one block share a stored event id).
    public let block: Int64
    /// Guards `last`, and nothing else.
    private let lock = NSLock()
    private var last: Int64

    /// - Parameter base: an id no earlier run issued (see the type's documentation); `>= 0`.
    /// - Parameter block: 1 (a single node), or `ClusterEventID.block` (`base` then a multiple of it).
    public init(startingAfter base: Int64, block: Int64 = 1) {
        precondition(base >= 0, "event ids are positive")
        precondition(block >= 1 && base % block == 0, "the base starts a block")
        self.base = base
        self.block = block
        self.last = base
    }

    /// Moves the counter up to `id` (an id published from elsewhere: a stored event's, scaled); never down.
    public func advance(to id: Int64) {
        lock.lock()
        defer { lock.unlock() }
        last = max(last, id)
    }

    /// A new id within the current block, or nil when the block is used up (the next id belongs to the next
    /// stored event). With `block == 1`, always nil.
    public func nextInBlock() -> Int64? {
        lock.lock()
        defer { lock.unlock() }
        guard (last + 1) % block != 0 else { return nil }
        last += 1
        return last
    }

    /// The highest id a client may have been given by some node: `lastAllocated` on a single node; with several,
    /// the end of the current block (another node may have numbered more progress events in it).
    public var replayCeiling: Int64 {
        lock.lock()
        defer { lock.unlock() }
        return (last / block + 1) * block - 1
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
