import Dispatch

/// What stands between the engine and the file system: the spool (partial files, finish records), where finished
/// files are kept, the quota, the last free-space reading, the queues disk work runs on so that the engine queue
/// never waits for a disk, the writers holding chunks staged during the current libcurl call, and the finished files
/// waiting for their group's move into `files/` (group commit, see `DownloadEngine.finish(_:)`).
///
/// Owner: `DownloadEngine.queue`, for its `var`s; `spool`, `storage` and `allowance` are thread-safe.
struct EngineDisk {
    let spool: Spool
    /// Where finished files are kept and named (the spool's `files/` unless another storage is given).
    let storage: any FileStorage
    /// The spool's quota, when one is set: asked before a file takes space (`claimSpace`).
    let allowance: (any SpoolAllowance)?
    /// Moves into `files/` and the other disk work the engine queue hands off.
    let queue = DispatchQueue(label: "ferry.engine.disk", qos: .utility)
    /// Hashes finished files whose SHA-256 was never stored (`digestFinished`), one at a time.
    let backfillQueue = DispatchQueue(label: "ferry.engine.digest-backfill", qos: .utility)
    /// The spool's free space as last read: see `freeBytes(needing:)`.
    var freeSpace = FreeSpaceGauge()
    /// When the ticker last checked the free space (monotonic seconds; 0: check at the next tick).
    var lastCheck: Double = 0
    /// Writers holding chunks staged during the current libcurl call; queued when it returns.
    var stagedWriters: [FileWriter] = []
    /// Synced files waiting for their group's move into `files/`.
    var finishGroups = GroupCommit<DownloadEngine.PendingFinish>()
}
