import Synchronization

/// The parts record (`object_uploads` document) each job had when this node claimed it, read by the claim's own
/// statement (`ClaimedJob.objectUpload`): the engine's first start of the job takes it here instead of asking the
/// store once more per job (`ClusterUploadLedger.record`). Nobody else writes a job's record while this node holds
/// it (a former owner's late write is refused by its epoch), so it is current until the job starts; each is taken
/// once, and dropped when the node stops running the job unstarted: a later start asks the store.
///
/// Owner: its `Mutex`. Written by the supervisor (`claimed` on a claim, `forget` on a drop); taken by the engine's
/// ledger from any thread.
final class ClaimedUploadRecords: Sendable {
    private let records = Mutex<[String: String?]>([:])

    /// The claim of `id` read `document` (nil: the job had no record).
    func claimed(_ id: String, document: String?) {
        records.withLock { $0[id] = .some(document) }
    }

    /// What the claim of `id` read, once: `.some(nil)` when the job had no record, nil when no claim said.
    func take(_ id: String) -> String?? {
        records.withLock { $0.removeValue(forKey: id) }
    }

    func forget(_ id: String) {
        _ = records.withLock { $0.removeValue(forKey: id) }
    }
}
