import FerryEngine
import FerryStore
import Foundation
import Logging

/// The engine's `ObjectUploadLedger` on the cluster's store: each unfinished job's multipart upload record as a JSON
/// document (`object_uploads`), written by this node only while it owns the job (or nobody does). Store failures are
/// logged and otherwise ignored: a part not recorded is only fetched again by a node taking the job over.
/// It also tells the engine whether the node may still act (`mayAct`: its `LeaseFence` holds), counting each side
/// effect it holds back as a fenced write.
struct ClusterUploadLedger: ObjectUploadLedger {
    let store: any ClusterJobStore
    let node: String
    let fence: LeaseFence?
    /// The epochs the node took its jobs under: a record is written only while the job's is still this one.
    let held: HeldEpochs
    /// The records the node's claims read: a job's first start takes its record there.
    let claimed: ClaimedUploadRecords
    let metrics: ServiceMetrics
    let logger: Logger

    func mayAct(jobID: String) -> Bool {
        guard let fence, !fence.holds() else { return true }
        metrics.fencedWrites(1)
        return false
    }

    func record(jobID: String) async -> ObjectUploadRecord? {
        do {
            let document: String?
            if let read = claimed.take(jobID) { document = read } else { document = try await store.objectUpload(jobID: jobID) }
            guard let document else { return nil }
            return try JSONDecoder().decode(ObjectUploadRecord.self, from: Data(document.utf8))
        } catch {
            logger.warning("cannot read a job's stored parts", metadata: ["job": "\(jobID)", "error": "\(error)"])
            return nil
        }
    }

    func store(_ record: ObjectUploadRecord?, jobID: String) async {
        do {
            let document = try record.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
            try await store.saveObjectUpload(document, jobID: jobID, node: node, epoch: held.epoch(of: jobID))
        } catch {
            logger.warning("cannot record a job's stored parts", metadata: ["job": "\(jobID)", "error": "\(error)"])
        }
    }
}
