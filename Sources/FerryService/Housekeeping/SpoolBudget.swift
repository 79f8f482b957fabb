import FerryStore

/// The spool quota's arithmetic (`--spool-quota`): pure, so the supervisor's decisions are tested
/// apart from downloads.
///
/// Bytes a job holds are its `bytesReceived` (the partial file, or the finished file); cancelled
/// jobs hold none. A job may grow to its expected size when that is known; otherwise it is checked
/// as its bytes arrive.
struct SpoolBudget: Sendable, Equatable {
    var quota: Int64

    /// Bytes the spool holds for `jobs`, leaving out `excluding`.
    static func held(by jobs: some Sequence<JobRecord>, excluding: String? = nil) -> Int64 {
        var total: Int64 = 0
        for job in jobs where job.id != excluding && job.state != .cancelled { total += job.bytesReceived }
        return total
    }

    /// True when nothing more fits: a new job is refused at submit time.
    func isFull(held: Int64) -> Bool { held >= quota }

    /// True when a job whose file will be `size` bytes fits beside `othersHeld`.
    func admits(size: Int64, othersHeld: Int64) -> Bool { othersHeld + size <= quota }
}
