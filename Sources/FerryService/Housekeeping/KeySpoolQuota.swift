import FerryEngine
import FerryStore
import Synchronization

/// Each API key's `spoolBytes` (its finished and partial files together), on top of the spool quota when there is
/// one: a file fits when both its key's budget and the spool's leave room for it, claimed whole before any byte is
/// written, as `SpoolQuota` does (a file that cannot fit fails with `quota_exceeded` having taken no space).
///
/// On several nodes the table holds every node's jobs, so the key's files there count: finished ones, and running
/// ones at their expected size (`claims(of:besides:)`); two of a key's files starting on two nodes within the time
/// their sizes take to reach each other's table (a stored event, well under a second) may together pass the limit.
///
/// Reads the supervisor's `JobTable` and the `KeyRing`; its own claims are guarded by `claims` (taken before the
/// table's lock, never after; the inner quota's lock is taken after this one is released).
final class KeySpoolQuota: SpoolAllowance {
    private let inner: SpoolQuota?
    private let keys: KeyRing
    private let table: JobTable
    private let claims = Mutex<[String: Int64]>([:])

    init(inner: SpoolQuota?, keys: KeyRing, table: JobTable) {
        self.inner = inner
        self.keys = keys
        self.table = table
    }

    func claim(jobID: String, size: Int64?) -> SpoolClaim {
        let ownLimit: Int64?
        switch claimForKey(jobID: jobID, size: size) {
        case .refused(let why): return .refused(why)
        case .granted(let limit): ownLimit = limit
        }
        guard let inner else { return .granted(limit: ownLimit) }
        switch inner.claim(jobID: jobID, size: size) {
        case .refused(let why):
            claims.withLock { _ = $0.removeValue(forKey: jobID) }
            return .refused(why)
        case .granted(let limit):
            return .granted(limit: [limit, ownLimit].compactMap { $0 }.min())
        }
    }

    func release(jobID: String) {
        claims.withLock { _ = $0.removeValue(forKey: jobID) }
        inner?.release(jobID: jobID)
    }

    /// What the key's `jobs` have claimed: this node's claims, and for each of them downloading without one here (on
    /// another node, or about to claim on this one) its whole expected size, which its node claimed or will claim.
    /// So a key's files on every node count against its `spoolBytes` as soon as their sizes reach this node's table.
    static func claims(of jobs: [JobRecord], besides local: [String: Int64]) -> [String: Int64] {
        var claims: [String: Int64] = [:]
        for job in jobs {
            if let claimed = local[job.id] {
                claims[job.id] = claimed
            } else if job.state == .downloading, let expected = job.bytesExpected {
                claims[job.id] = expected
            }
        }
        return claims
    }

    /// The key's part: granted without a limit for the administrator's jobs and keys without `spoolBytes`.
    private func claimForKey(jobID: String, size: Int64?) -> SpoolClaim {
        guard let owner = table.jobs[jobID]?.ownerKey, let quota = keys.key(id: owner)?.limits.spoolBytes else {
            return .granted(limit: nil)
        }
        return claims.withLock { claims in
            claims[jobID] = nil
            let budget = SpoolBudget(quota: quota)
            let mine = table.jobs.values.filter { $0.ownerKey == owner }
            let others = SpoolBudget.held(by: mine, excluding: jobID, claims: Self.claims(of: mine, besides: claims))
            guard let room = budget.room(for: size, othersHeld: others) else {
                return .refused("the file needs \(size ?? 0) bytes, which would take this key past its spoolBytes of "
                                + "\(quota) bytes (\(max(0, quota - others)) left)")
            }
            claims[jobID] = size ?? 0
            return .granted(limit: room)
        }
    }
}
