import FerryEngine
import Synchronization

/// The spool quota as the engine asks for it (`SpoolAllowance`): a file fits when the quota less what every other
/// job holds or has claimed leaves room for it.
///
/// The engine claims a file's whole size before its first body byte is written or the file is preallocated, so a
/// file that cannot fit fails with `quota_exceeded` having taken no space, and two transfers starting together
/// cannot both take the last room. A file of unknown length is granted the room left, and stopped when it grows
/// past it. Reads the supervisor's `JobTable`; its own claims are guarded by `claims` (taken before the table's
/// lock, never after).
final class SpoolQuota: SpoolAllowance {
    let budget: SpoolBudget
    private let table: JobTable
    private let claims = Mutex<[String: Int64]>([:])

    init(quota: Int64, table: JobTable) {
        budget = SpoolBudget(quota: quota)
        self.table = table
    }

    func claim(jobID: String, size: Int64?) -> SpoolClaim {
        claims.withLock { claims in
            claims[jobID] = nil
            let others = SpoolBudget.held(by: table.jobs.values, excluding: jobID, claims: claims)
            guard let room = budget.room(for: size, othersHeld: others) else {
                return .refused("the file needs \(size ?? 0) bytes, which would take the spool past its quota of "
                                + "\(budget.quota) bytes (\(max(0, budget.quota - others)) left)")
            }
            claims[jobID] = size ?? 0
            return .granted(limit: room)
        }
    }

    func release(jobID: String) {
        claims.withLock { _ = $0.removeValue(forKey: jobID) }
    }

    /// True when nothing more fits: new jobs are refused at submit time.
    var isFull: Bool {
        claims.withLock { claims in budget.isFull(held: SpoolBudget.held(by: table.jobs.values, claims: claims)) }
    }
}
