import FerryStore
import Foundation

/// The jobs as aria2 lists its downloads: active (downloading or delivering, oldest first), the waiting queue (waiting
/// and paused, in the order the engine starts them: higher priority first, then older first) and the stopped ones (in
/// the order they ended, then oldest first), with how many each list has and the download speed (`getGlobalStat`).
/// Gathered in one pass over the listings of the supervisor's table (`gather`), keeping only the lists a call answers
/// with, each job of them with its status object already written when one can be reused (`Aria2StatusCache`), else
/// with its record. Pure once made.
struct Aria2Jobs: Sendable {
    /// A job of a kept list.
    struct Entry: Sendable {
        enum Content: Sendable {
            /// Its status object, already written for the call's fields.
            case written([UInt8])
            /// Its record and live rates, to write it from.
            case record(JobRecord, LiveRates?)
        }

        let listing: JobListing
        let content: Content

        var gid: String { JobGID.text(listing.gid) }

        /// The record, when the entry has it.
        var job: JobRecord? {
            if case .record(let job, _) = content { job } else { nil }
        }
    }

    /// One of aria2's lists: its entries as gathered, and their order once sorted (`sortLists`), so that a list of a
    /// thousand entries is not copied to be put in order.
    struct List: Sendable {
        fileprivate(set) var entries: [Entry] = []
        /// The indices of `entries` in the list's order.
        fileprivate(set) var order: [Int] = []

        var count: Int { entries.count }
        /// The entries in the list's order.
        var sorted: [Entry] { order.map { entries[$0] } }
    }

    /// Which lists to keep (each list is counted either way).
    struct Lists: OptionSet, Sendable {
        let rawValue: UInt8
        static let active = Self(rawValue: 1 << 0)
        static let waiting = Self(rawValue: 1 << 1)
        static let stopped = Self(rawValue: 1 << 2)
        static let all: Self = [.active, .waiting, .stopped]
    }

    let lists: Lists
    /// The status objects the lists' jobs may come with instead of their records; nil: every job comes with its record.
    let reusable: Aria2StatusCache.Reusable?
    private(set) var active = List()
    private(set) var waiting = List()
    private(set) var stopped = List()
    private(set) var counts = (active: 0, waiting: 0, stopped: 0)
    /// The sum of the downloading jobs' smoothed speeds, in bytes per second.
    private(set) var speed = 0.0

    init(keeping lists: Lists = .all, reusing reusable: Aria2StatusCache.Reusable? = nil) {
        self.lists = lists
        self.reusable = reusable
    }

    /// The jobs `access` sees in `table`, as readers see them (`JobTable.forEachListed`: one hold of its lock, no record
    /// copied but those of the lists kept that have no status object to reuse), each list in aria2's order.
    static func gather(from table: JobTable, access: JobAccess, keeping lists: Lists = .all,
                       reusing reusable: Aria2StatusCache.Reusable? = nil) -> Aria2Jobs {
        var jobs = Aria2Jobs(keeping: lists, reusing: reusable)
        table.forEachListed(onlyKey: access.onlyKey) { listing, shown, rates in
            jobs.add(listing, shown: shown, rates: rates)
        }
        jobs.sortLists()
        return jobs
    }

    /// Counts a job, and keeps it when its list is kept (`sortLists` puts the lists in order once all are added);
    /// `shown` and `rates` are called only when needed.
    mutating func add(_ listing: JobListing, shown: () -> JobRecord, rates: () -> LiveRates?) {
        let list: Lists
        switch listing.state {
        case .downloading, .delivering:
            counts.active += 1
            if listing.state == .downloading { speed += rates()?.speed ?? 0 }
            list = .active
        case .waiting, .paused:
            counts.waiting += 1
            list = .waiting
        case .finished, .failed, .cancelled:
            counts.stopped += 1
            list = .stopped
        }
        guard lists.contains(list) else { return }
        let entry: Entry
        if let bytes = reusable?.bytes(for: listing) {
            entry = Entry(listing: listing, content: .written(bytes))
        } else {
            entry = Entry(listing: listing, content: .record(shown(), rates()))
        }
        switch list {
        case .active: active.entries.append(entry)
        case .waiting: waiting.entries.append(entry)
        default: stopped.entries.append(entry)
        }
    }

    /// Puts each list in its order: active by age; waiting by priority (higher first), then age; stopped by when they
    /// ended, then age.
    mutating func sortLists() {
        active.order = Self.order(of: active.entries)
        waiting.order = Self.order(of: waiting.entries)
        stopped.order = Self.order(of: stopped.entries)
    }

    /// The indices of `entries` (all of one list) ordered by their listings' `rank`, then `sequence` (the keys are
    /// sorted, not the entries).
    private static func order(of entries: [Entry]) -> [Int] {
        var keys: [(first: Double, sequence: Int64, index: Int)] = []
        keys.reserveCapacity(entries.count)
        for index in entries.indices {
            keys.append((entries[index].listing.rank, entries[index].listing.sequence, index))
        }
        keys.sort { $0.first != $1.first ? $0.first < $1.first : $0.sequence < $1.sequence }
        return keys.map(\.index)
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
