import FerryCore
import Foundation

/// With an object store (`objectStore`), a verified file is stored as an object before it is moved into
/// `files/` and reported finished: any node can then serve it, and the local copy in `files/` stays for the
/// deliveries and duplicate checks of this node.
///
/// The upload reads the synced partial file (`FinishedObjectUpload`), so a restart before it completed finds an
/// unfinished job with a whole partial file, never a finish record without its object. A store that is
/// unreachable or failing is retried with the engine's back-off for as long as it takes (the job stays
/// downloading, told why and until when by a `.storing` event); refused credentials or a refused request fail the job with the store's
/// words. A cancel during the upload aborts it; a pause or shutdown stops it (at once while a back-off is waited
/// out) and the job keeps its bytes.
extension DownloadEngine {
    /// The verified file goes on towards `files/`: through the object store first when there is one.
    func keep(_ pending: PendingFinish) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let objectStore else {
            if let group = disk.finishGroups.add(pending) { moveToFiles(group) }
            return
        }
        // Parts in flight end first: their outcome decides what the finish still sends.
        whenPartsIdle(pending.transfer) { self.upload(pending, to: objectStore, attempt: 1) }
    }

    private func upload(_ pending: PendingFinish, to client: ObjectStoreClient, attempt: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        let transfer = pending.transfer, finish = pending.finish
        let path = spool.partialPath(for: finish.jobID)
        let key = client.location.key(jobID: finish.jobID, filename: finish.filename)
        let contentType = transfer.contentType
        // The upload the parts went to while the file downloaded, when it is this file's.
        let live = transfer.parts.record.flatMap { record in
            record.key == key && record.size == finish.size ? record : nil
        }
        if live == nil { discardParts(transfer) }
        let upload = FinishedObjectUpload(client: client, partSize: live?.partSize ?? configuration.objectPartSize)
        // Unfinished uploads can be left under the job's keys only when one was made: by this node (now or while it
        // downloaded) or by another (whose record this submission read); a file of one part is sent in one request.
        let sweep = transfer.parts.multipartSeen || live != nil || !upload.isSingleRequest(size: finish.size)
        let existing = live.map { (uploadID: $0.uploadID, parts: $0.parts) }
        let logger = self.logger
        Task {
            let failure: ObjectStoreError?
            do throws(ObjectStoreError) {
                try await upload.upload(path: path, key: key, size: finish.size, sha256: finish.sha256, contentType: contentType,
                                        existing: existing) {
                    await self.uploadMayContinue(transfer)
                }
                failure = nil
                // An upload started before the digest was known gets it now (a copy of the object onto itself).
                if existing != nil, let sha256 = finish.sha256 {
                    do throws(ObjectStoreError) {
                        try await client.replaceMetadata(key: key, contentType: contentType,
                                                         metadata: [FinishedObjectUpload.digestMetadata: sha256])
                    } catch {
                        logger.warning("the finished object keeps no SHA-256 metadata",
                                       metadata: ["job": "\(finish.jobID)", "error": "\(error)"])
                    }
                }
            } catch {
                failure = error
            }
            self.queue.async { self.uploaded(pending, to: client, attempt: attempt, sweep: sweep, failure) }
        }
    }

    /// Between parts and before the completion: false once the job is cancelled, the engine shuts down, or the
    /// node may no longer act for the job (`ObjectUploadLedger.mayAct`: the file stays whole in `partial/`).
    private func uploadMayContinue(_ transfer: Transfer) async -> Bool {
        await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: !self.lifecycle.shuttingDown && transfer.stopIntent != .cancel
                                        && (self.uploadLedger?.mayAct(jobID: transfer.id) ?? true))
            }
        }
    }

    private func uploaded(_ pending: PendingFinish, to client: ObjectStoreClient, attempt: Int, sweep: Bool,
                          _ failure: ObjectStoreError?) {
        dispatchPrecondition(condition: .onQueue(queue))
        let transfer = pending.transfer
        guard let failure else {
            partsCompleted(transfer)
            if sweep { sweepUnfinishedUploads(jobID: pending.finish.jobID, client: client) }
            if let group = disk.finishGroups.add(pending) { moveToFiles(group) }
            return
        }
        if transfer.stopIntent != nil || lifecycle.shuttingDown || failure.kind == .stopped {
            leaveUnstored(transfer, size: pending.finish.size)
            return
        }
        if failure.kind == .notFound, transfer.parts.record != nil {
            // The upload the parts went to is gone: the file is stored with a new one.
            transfer.parts.record = nil
            upload(pending, to: client, attempt: attempt + 1)
            return
        }
        guard failure.isRetryable else {
            giveUp(transfer, JobFailure(code: .internalError, message: "storing the finished file failed: \(failure)"))
            return
        }
        let delay = configuration.retry.delay(afterAttempt: attempt, retryAfter: nil, jitter: Double.random(in: 0...1))
        logger.warning("storing a finished file waits for the object store", metadata: [
            "job": "\(transfer.id)", "attempt": "\(attempt)", "retryIn": "\(Int(delay.rounded(.up)))s", "error": "\(failure)",
        ])
        emit(.storing(id: transfer.id, at: Date(timeIntervalSinceNow: delay), attempt: attempt,
                      failure: JobFailure(code: .networkError, message: "\(failure)")))
        let size = pending.finish.size
        let retry = DispatchWorkItem {
            transfer.storeWait = nil
            if transfer.stopIntent != nil || self.lifecycle.shuttingDown {
                self.leaveUnstored(transfer, size: size)
            } else {
                self.upload(pending, to: client, attempt: attempt + 1)
            }
        }
        transfer.storeWait = (retry, size)
        queue.asyncAfter(deadline: .now() + delay, execute: retry)
    }

    /// An upload that ended without an object: a cancelled job loses its file, a stopped (or paused) one keeps it
    /// whole in `partial/` (the next start finds it complete and stores it).
    func leaveUnstored(_ transfer: Transfer, size: Int64) {
        if transfer.stopIntent == nil { transfer.stopIntent = .shutdown }
        stopped(transfer, bytesOnDisk: size)
        finishShutdownIfIdle()
    }

    /// Aborts every unfinished upload left under the job's keys once its object is stored: those a node killed or
    /// cut off between creating an upload and recording it, or while storing the finished file, could not abort
    /// (a node taking the job over starts its own). Not run for a file stored with one `PutObject` by a submission
    /// that made and found no multipart upload (`LiveParts.multipartSeen`): none was begun for a file of one part.
    /// Failures are logged; a lifecycle rule on the bucket is the backstop (docs/API.md).
    func sweepUnfinishedUploads(jobID: String, client: ObjectStoreClient) {
        let prefix = client.location.keyPrefix(jobID: jobID), logger = self.logger
        Task {
            do throws(ObjectStoreError) {
                for upload in try await client.unfinishedUploads(prefix: prefix) {
                    try await client.abortMultipartUpload(key: upload.key, uploadID: upload.uploadID)
                    logger.info("aborted an unfinished upload left behind", metadata: ["job": "\(jobID)", "key": "\(upload.key)"])
                }
            } catch where error.kind != .notFound {
                logger.warning("cannot abort a finished job's unfinished uploads", metadata: ["job": "\(jobID)", "error": "\(error)"])
            } catch {}
        }
    }

    /// Deletes a job's object (any thread); one already gone is not an error.
    func deleteObject(jobID: String, filename: String) {
        guard let objectStore else { return }
        let key = objectStore.location.key(jobID: jobID, filename: filename), logger = self.logger
        Task {
            do throws(ObjectStoreError) {
                try await objectStore.deleteObject(key: key)
            } catch where error.kind != .notFound {
                logger.warning("deleting a job's object failed", metadata: ["job": "\(jobID)", "error": "\(error)"])
            } catch {}
        }
    }
}
