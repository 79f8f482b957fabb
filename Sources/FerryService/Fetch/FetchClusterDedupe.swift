import FerryCore
import FerryStore
import Foundation

/// One origin transfer per URL across nodes (API.md, "Fetch-through", several nodes): two nodes asked for a new URL in
/// the same instant may each create a job before either sees the other's (each node's dedupe reads its own table,
/// which the cluster's feed fills a moment later). So before a fetch's clients are answered from a job that is not
/// finished, the store is asked for the key's jobs (every job committed before ours is there); when an older one is
/// live, ours is cancelled and its clients follow the older one (`FetchController.answer` finds it when its own job
/// is gone), so both nodes settle on the oldest and the origin is asked once. A race the store's order cannot show
/// (an older sequence committed after our read) may still leave two transfers; nothing is ever served spliced.
///
/// `olderJob` is pure; `yield` asks the store, the table and the supervisor. Made per request.
struct FetchClusterDedupe {
    let supervisor: JobSupervisor

    /// The job `mine` should give way to: the oldest other live fetch job of the same key and owner that was created
    /// before it (a lower sequence); nil when `mine` is the oldest. Pure.
    static func olderJob(than mine: JobRecord, among jobs: [JobRecord]) -> JobRecord? {
        jobs.filter { job in
            job.id != mine.id && job.sequence < mine.sequence && job.dedupeKey == mine.dedupeKey
                && job.ownerKey == mine.ownerKey && job.tags.contains(FetchCache.tag) && job.delivery == nil
                && ![.failed, .cancelled].contains(job.state)
        }.min { $0.sequence < $1.sequence }
    }

    /// The older job `job` gave way to (ours is then cancelled), or nil: keep `job` (or, when the older job did not
    /// show in this node's table within 2 s, follow ours, cancelled: `FetchController.answer` then looks again).
    /// Only on several nodes, for a job not finished yet.
    func yield(_ job: JobRecord) async -> JobRecord? {
        guard let store = supervisor.role?.store, job.state != .finished, job.state != .delivering,
              let stored = try? await store.jobs(dedupeKey: job.dedupeKey),
              let older = Self.olderJob(than: job, among: stored) else { return nil }
        // At once, before its transfer gets far; then its clients follow the older job through this node's table,
        // once the feed brought it (briefly waited for; they find it themselves when ours shows as gone).
        _ = try? await supervisor.cancel(job.id)
        let deadline = Date().addingTimeInterval(2)
        while supervisor.table.entry(older.id) == nil {
            guard Date() < deadline else { return nil }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return supervisor.table.entry(older.id)?.0
    }
}
