import FerryStore
import Foundation

/// The jobs as aria2 lists its downloads: active (downloading or delivering), the waiting queue (waiting and paused,
/// in the order the engine starts them: higher priority first, then older first) and the stopped ones (in the order
/// they ended). Made from one snapshot of the supervisor's list. Pure once made.
struct Aria2Jobs: Sendable {
    typealias Entry = (job: JobRecord, rates: LiveRates?)

    var active: [Entry] = []
    var waiting: [Entry] = []
    var stopped: [Entry] = []

    init(_ entries: [(JobRecord, LiveRates?)]) {
        for (job, rates) in entries {
            switch job.state {
            case .downloading, .delivering: active.append((job, rates))
            case .waiting, .paused: waiting.append((job, rates))
            case .finished, .failed, .cancelled: stopped.append((job, rates))
            }
        }
        waiting.sort(by: Self.queueOrder)
        stopped.sort { ($0.job.finishedAt ?? $0.job.updatedAt) < ($1.job.finishedAt ?? $1.job.updatedAt) }
    }

    static func queueOrder(_ a: Entry, _ b: Entry) -> Bool {
        a.job.priority != b.job.priority ? a.job.priority > b.job.priority : a.job.sequence < b.job.sequence
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
