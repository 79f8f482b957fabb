import Dispatch
import Foundation
import Synchronization

/// A fixed set of serial queues ("lanes") that the writers' queues run on, so that the threads serving disk work and
/// hashing no longer grow with the number of running transfers (issue 32).
///
/// Each `FileWriter` keeps its own serial queue and digest queue (their order and what they confine are unchanged),
/// each a `LaneQueue` on a lane of its spool's `Pair` (`Spool.lanes`): the writer queue on one of `writes`, the
/// digest queue on one of `digests`, chosen when the writer is made (`lane()`). A lane is a serial queue, so it holds
/// at most one thread; at most `writes.count + digests.count` threads write and hash, whatever the number of
/// transfers. Before, every writer's two queues targeted the default overcommit root queue directly, which makes a
/// thread for each queue with work while none is idle, up to libdispatch's cap of 255: 221 threads under the load
/// suite's 200 downloads, each with its stack and malloc cache.
///
/// What one busy or slow writer holds up, and why it is bounded:
/// - a `LaneQueue` runs at most `LaneQueue.defaultTurn` blocks per turn and then waits behind the other queues of its
///   lane, so a writer whose queue is kept fed delays another by one turn, not until it runs dry (a `DispatchQueue`
///   targeting the lane would be drained until empty first);
/// - a writer never waits for its digest queue: what it hands over (runs to hash, read-back of the file in slices of
///   8 MiB, the final digest) is queued there, and its results that need the digest are delivered from there; so a
///   busy digest lane never holds a write lane, and no lane ever waits for another;
/// - the lanes belong to one `Spool` (one Ferry): another Ferry in the same process (the tests run dozens) has lanes
///   of its own. Issue 32's first version had one static set per process, drained until empty, and writers that
///   waited for their digest lane with `sync`: in `swift test` beside a busy CPU, 53–56 tests' requests went
///   unanswered together for 15 s (thread dumps showed no thread held on a lane: the work waited unrun, so which of
///   the three caused it is not known; this shape removes all three);
/// - a lane that stays busy anyway (a write that hangs on a dead disk) is avoided by writers made later: each lane
///   answers a probe queued behind its work, and `lane()` skips a lane whose probe has waited longer than `stallAfter`
///   (unless every lane is that late), so new transfers go on to the lanes that move.
///
/// Why serial lanes and not a wider shared target: not the global concurrent queues, since on Linux
/// swift-corelibs-libdispatch has no separate cooperative pool, so those queues are the ones Swift concurrency's
/// executor runs request handlers on; a blocking `pwrite`, `fsync` or file read-back there would take their width
/// (one thread per core).
///
/// Lanes per set: two per active core, at least 4 and at most 16 (4 on the 2-core test machine: the threads
/// writing and hashing went from 221 to 8 + the fixed ones; see docs/ARCHITECTURE.md).
///
/// The service's follow streams (`FollowStream`, one serial queue per client following a growing file) target a set
/// of their own the same way (`Spool.followLanes`), so the threads serving them do not grow with the number of such
/// clients either.
///
/// Thread-safe: the lanes are set in `init`; the round-robin position and each lane's probe are atomics.
public final class DiskLanes: Sendable {
    /// The two sets a writer's queues run on: its writes' and its digest's.
    public struct Pair: Sendable {
        let writes: DiskLanes
        let digests: DiskLanes

        /// One Ferry's lanes (`Spool.lanes`), `count` of each.
        init(label: String, count: Int = DiskLanes.defaultCount) {
            writes = DiskLanes(label: "\(label).disk-lane", count: count)
            digests = DiskLanes(label: "\(label).digest-lane", count: count)
        }

        /// One lane of each for one writer alone: a test that holds a writer's queue holds no other writer.
        static func alone(_ label: String) -> Pair {
            Pair(label: label, count: 1)
        }
    }

    /// Two per active core, 4 to 16.
    public static var defaultCount: Int { min(16, max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)) }

    private final class Lane: Sendable {
        let queue: DispatchQueue
        /// When the probe still queued on `queue` was sent (uptime, ns); 0 when none is queued.
        let probeSentAt = Atomic<UInt64>(0)

        init(label: String, qos: DispatchQoS) {
            queue = DispatchQueue(label: label, qos: qos)
        }

        /// Queues a probe behind the lane's work, unless one is already waiting.
        func probe(now: UInt64) {
            guard probeSentAt.compareExchange(expected: 0, desired: now, ordering: .relaxed).exchanged else { return }
            queue.async { self.probeSentAt.store(0, ordering: .relaxed) }
        }
    }

    private let lanes: [Lane]
    private let stallAfter: UInt64
    private let position = Atomic<Int>(0)

    /// The number of lanes.
    public var count: Int { lanes.count }

    /// - Parameters:
    ///   - count: the number of lanes (at least 1).
    ///   - stallAfter: how long a lane's probe may wait before the lane is avoided by new writers.
    public init(label: String, count: Int, qos: DispatchQoS = .unspecified, stallAfter: Duration = .seconds(1)) {
        lanes = (0..<max(1, count)).map { Lane(label: "\(label).\($0)", qos: qos) }
        let (seconds, attoseconds) = stallAfter.components
        self.stallAfter = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// A serial queue of its own on the next lane (`lane()`), run a turn at a time (`LaneQueue`).
    func queue(label: String) -> LaneQueue {
        LaneQueue(label: label, lane: lane())
    }

    /// The lane a new queue should target: the next in turn that is not stalled.
    public func lane() -> DispatchQueue {
        let start = position.wrappingAdd(1, ordering: .relaxed).oldValue
        let now = DispatchTime.now().uptimeNanoseconds
        let sent = lanes.map { $0.probeSentAt.load(ordering: .relaxed) }
        let index = LaneChoice.pick(start: start, probesSentAt: sent, now: now, stallAfter: stallAfter)
        lanes[index].probe(now: now)
        return lanes[index].queue
    }
}

/// Which lane a new writer gets (`DiskLanes.lane()`): the first from `start` on, round-robin, whose probe is not
/// older than `stallAfter`; `start`'s lane when every lane is stalled. Pure.
enum LaneChoice {
    /// - Parameter probesSentAt: per lane, when its waiting probe was sent (0: none waiting).
    static func pick(start: Int, probesSentAt: [UInt64], now: UInt64, stallAfter: UInt64) -> Int {
        let count = probesSentAt.count
        let first = ((start % count) + count) % count
        for offset in 0..<count {
            let index = (first + offset) % count
            let sent = probesSentAt[index]
            if sent == 0 || now < sent || now - sent <= stallAfter { return index }
        }
        return first
    }
}
