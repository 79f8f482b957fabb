import FerryStore

/// Whether rows another node's commit changed may have left work this node can claim (pure). After a refresh
/// (`JobSupervisor.refresh`) a claim is a statement on the shared store for every node that heard the commit; most
/// commits (a job running elsewhere moving on or ending) free nothing here, and the claim after every lease renewal
/// (`LeaseKeeper.tick`) catches what this misses.
enum ClaimWorth {
    /// A job that wants running with no node holding it (made, resumed, released by its owner), or a job of an API
    /// key that stopped or went away (a slot under the key's `maxActiveJobs`, which counts every node's jobs).
    /// - Parameters:
    ///   - rows: the rows read, with the node whose lease runs on each (`nil`: none).
    ///   - goneKeys: for each job no longer stored, the key it was made with as this node last saw it.
    static func after(_ rows: [(job: JobRecord, liveOwner: String?)], goneKeys: [String?]) -> Bool {
        rows.contains { row in
            row.job.state.needsRunning ? row.liveOwner == nil : row.job.ownerKey != nil
        } || goneKeys.contains { $0 != nil }
    }
}
