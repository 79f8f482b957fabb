import Synchronization

/// The epoch (`ClaimedJob.epoch`, the store's fencing token) under which this node last took each job, kept after it
/// stops running the job until it reads the job's row back from the store (a change notified): every write the node makes for such a job carries
/// it (`ClusterChange.heldUnder`, stamped by the `CommitPipeline` when the change is queued; the parts record of
/// `ClusterUploadLedger`), so the store refuses the write of a node that wakes up late for a job taken since.
///
/// Owner: its `Mutex`. Written by the supervisor (`took` on a claim or an acquisition, `forget` when it reads a job
/// back that it does not run);
/// read by the commit pipeline and the engine's ledger from any thread.
final class HeldEpochs: Sendable {
    private let epochs = Mutex<[String: Int64]>([:])

    /// The node took `id` under `epoch`.
    func took(_ id: String, epoch: Int64) {
        epochs.withLock { $0[id] = epoch }
    }

    /// Another node changed these jobs (or they are gone): this node holds them under no epoch of its own.
    func forget<S: Sequence<String>>(_ ids: S) {
        epochs.withLock { held in
            for id in ids { held[id] = nil }
        }
    }

    /// The epoch the node took `id` under, if it did.
    func epoch(of id: String) -> Int64? {
        epochs.withLock { $0[id] }
    }

    /// The epochs of those of `ids` the node took.
    func epochs<S: Sequence<String>>(of ids: S) -> [String: Int64] {
        epochs.withLock { held in
            var found: [String: Int64] = [:]
            for id in ids { if let epoch = held[id] { found[id] = epoch } }
            return found
        }
    }
}
