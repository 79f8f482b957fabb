import FerryCore
import FerryStore

/// The spool quota's arithmetic (`--spool-quota`): pure, so the decisions are tested apart from downloads.
///
/// Bytes a job holds are its `bytesReceived` (the partial file, or the finished file), or what its running transfer
/// has claimed for the whole file if that is more; cancelled jobs hold none, and neither do jobs whose failure
/// deleted their bytes (`checksum_mismatch`, `quota_exceeded`).
struct SpoolBudget: Sendable, Equatable {
    var quota: Int64

    /// Failures after which the engine deletes the partial file, so the job holds nothing.
    static let discardingFailures: Set<FailureCode> = [.checksumMismatch, .quotaExceeded]

    /// Bytes the spool holds for `jobs`, leaving out `excluding`; `claims` are the whole-file sizes running
    /// transfers claimed (`SpoolQuota`).
    static func held(by jobs: some Sequence<JobRecord>, excluding: String? = nil, claims: [String: Int64] = [:]) -> Int64 {
        var total: Int64 = 0
        for job in jobs where job.id != excluding {
            total += max(onDisk(job), claims[job.id] ?? 0)
        }
        return total
    }

    /// Bytes of the job's file in the spool, as far as the job record tells.
    static func onDisk(_ job: JobRecord) -> Int64 {
        if job.state == .cancelled { return 0 }
        if job.state == .failed, let code = job.error?.code, discardingFailures.contains(code) { return 0 }
        return job.bytesReceived
    }

    /// True when nothing more fits: a new job is refused at submit time.
    func isFull(held: Int64) -> Bool { held >= quota }

    /// What a file may take beside `othersHeld`: nil when a file of `size` bytes does not fit, else the room left
    /// (the most an unknown-length file may grow to).
    func room(for size: Int64?, othersHeld: Int64) -> Int64? {
        let room = max(0, quota - othersHeld)
        if let size, size > room { return nil }
        return room
    }
}
