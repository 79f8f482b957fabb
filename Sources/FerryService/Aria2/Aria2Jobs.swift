import FerryStore
import Foundation

/// The jobs as aria2 lists its downloads: active (downloading or delivering, oldest first), the waiting queue (waiting
/// and paused, in the order the engine starts them: higher priority first, then older first) and the stopped ones (in
/// the order they ended, then oldest first), with how many each list has and the download speed (`getGlobalStat`).
/// Gathered in one pass over the supervisor's table (`gather`), keeping only the lists a call answers with. Pure once made.
struct Aria2Jobs: Sendable {
    typealias Entry = (job: JobRecord, rates: LiveRates?, gid: String)

    /// Which lists to keep (each list is counted either way).
    struct Lists: OptionSet, Sendable {
        let rawValue: UInt8
        static let active = Self(rawValue: 1 << 0)
        static let waiting = Self(rawValue: 1 << 1)
        static let stopped = Self(rawValue: 1 << 2)
        static let all: Self = [.active, .waiting, .stopped]
    }

    let lists: Lists
    private(set) var active: [Entry] = []
    private(set) var waiting: [Entry] = []
    private(set) var stopped: [Entry] = []
    private(set) var counts = (active: 0, waiting: 0, stopped: 0)
    /// The sum of the downloading jobs' smoothed speeds, in bytes per second.
    private(set) var speed = 0.0

    init(keeping lists: Lists = .all) { self.lists = lists }

    /// The jobs `access` sees in `table`, as readers see them (`JobTable.forEachShown`: one hold of its lock, no record
    /// copied but those of the lists kept), each list in aria2's order.
    static func gather(from table: JobTable, access: JobAccess, keeping lists: Lists = .all) -> Aria2Jobs {
        var jobs = Aria2Jobs(keeping: lists)
        table.forEachShown { job, rates, gid in
            if access.sees(job) { jobs.add(job, rates: rates, gid: gid) }
        }
        jobs.sortLists()
        return jobs
    }

    /// Counts a job, and keeps it when its list is kept (`sortLists` puts the lists in order once all are added).
    mutating func add(_ job: JobRecord, rates: LiveRates?, gid: String) {
        switch job.state {
        case .downloading, .delivering:
            counts.active += 1
            if job.state == .downloading { speed += rates?.speed ?? 0 }
            if lists.contains(.active) { active.append((job, rates, gid)) }
        case .waiting, .paused:
            counts.waiting += 1
            if lists.contains(.waiting) { waiting.append((job, rates, gid)) }
        case .finished, .failed, .cancelled:
            counts.stopped += 1
            if lists.contains(.stopped) { stopped.append((job, rates, gid)) }
        }
    }

    /// Puts each list in its order: active by age; waiting by priority (higher first), then age; stopped by when they
    /// ended, then age.
    mutating func sortLists() {
        active = Self.sorted(active) { (0, $0.sequence) }
        waiting = Self.sorted(waiting) { (-Double($0.priority), $0.sequence) }
        stopped = Self.sorted(stopped) { (($0.finishedAt ?? $0.updatedAt).timeIntervalSinceReferenceDate, $0.sequence) }
    }

    /// `entries` ordered by `key`: the keys are sorted, not the entries, so a record is copied once, not at every move
    /// of the sort (a copy of a record retains each of its strings).
    private static func sorted(_ entries: [Entry], by key: (JobRecord) -> (Double, Int64)) -> [Entry] {
        var keys: [(first: Double, sequence: Int64, index: Int)] = []
        keys.reserveCapacity(entries.count)
        for index in entries.indices {
            let (first, sequence) = key(entries[index].job)
            keys.append((first, sequence, index))
        }
        keys.sort { $0.first != $1.first ? $0.first < $1.first : $0.sequence < $1.sequence }
        return keys.map { entries[$0.index] }
    }

    /// The priority that places a job at `position` of the waiting queue `others` (the job itself left out) without
    /// renumbering the others: one above the job it goes before (ties between equal priorities go by age), below the
    /// last one (and at most 0) at the end. Ferry orders its queue by priority, so this is aria2's `position` as near as one number gives.
    static func priority(forPosition position: Int, among others: [JobRecord]) -> Int {
        guard !others.isEmpty else { return 0 }
        let range = -1_000_000...1_000_000
        if position >= others.count { return max(range.lowerBound, min(others[others.count - 1].priority - 1, 0)) }
        let before = others[max(0, position)]
        return min(range.upperBound, before.priority + 1)
    }

    /// aria2's `POS_SET`, `POS_CUR`, `POS_END`: the position asked, within `0...count` of the others.
    static func position(_ pos: Int64, how: String, current: Int, others count: Int) throws(Aria2Error) -> Int {
        let target: Int64
        switch how {
        case "POS_SET": target = pos
        case "POS_CUR": target = Int64(current) + pos
        case "POS_END": target = Int64(count) + pos
        default: throw Aria2Error("Illegal argument.")
        }
        return Int(max(0, min(Int64(count), target)))
    }
}
