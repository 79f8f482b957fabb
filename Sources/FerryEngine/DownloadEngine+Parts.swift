import FerryCore
import Foundation

/// Parts uploaded while a download runs, and a job taken over continuing from them (with an object store and an
/// `uploadLedger`, i.e. on a cluster's store).
///
/// Who owns what: the engine queue owns each transfer's `LiveParts`; the ledger (the cluster's store, fenced by job
/// ownership) keeps its record, saved after every part stored (a part is recorded only after the store took it). As
/// the file's written ranges (`SegmentTable.writtenRanges`: every segment's `[start, next)`, bytes written and
/// confirmed under the validators of the accepted answer) cover a part, wherever it lies, that part is read from the
/// partial file and uploaded (`UploadPart`) beside the download, at most `PartUploadPlanner.inFlightLimit` at a time
/// (the planner decides each step; this file carries it out): a download split over several connections stores its
/// later segments' parts as they complete, not only its prefix. A failed request waits a back-off and is tried
/// again, and never fails the download: what is missing is uploaded at the finish (`FinishedObjectUpload` with the
/// existing upload), which completes the upload with every part in order.
///
/// A node starting a job reads its record first (`loadStoredParts`). When the record's validators are the job's and
/// its parts hold bytes the local file lacks, they are restored (`restore`: planned by `PartRestorePlan`, carried out
/// by `PartRestore`), the simplest way S3 allows, since the parts of an unfinished upload cannot be read:
/// 1. the recorded upload is completed into the job's key with every usable stored part, in part order (S3 takes
///    part numbers with gaps; only the last listed part may be short, and a short part is always the file's last):
///    the object is the parts' concatenation (`prefixObject`);
/// 2. each run of consecutive parts (`PartProgress.restoreRuns`) is read back with one ranged GET of that object and
///    written through the writer at its place in the file, which hashes bytes in file order (bytes past a gap are
///    hashed by its catch-up once the gap is filled, as for any segmented download). Parts forming a prefix make a
///    contiguous partial file; otherwise the file gets a segment sidecar (stored before any byte lands past a gap,
///    then rewritten with the restored ranges: `SegmentTable.restored`), so the resume is a segmented one fetching
///    only the gaps, with `If-Range` and the stored validators (`ResumeDecision`);
/// 3. a new upload is started at the same key with the restored parts copied inside the store (`UploadPartCopy` of
///    their ranges of the object: no byte sent again). When the store refuses a copy, the parts not copied are
///    uploaded from the spool like any written part: with libcurl 7.88 every ranged copy is refused (it signs
///    `x-amz-copy-source-range` before `x-amz-copy-source`; see docs/ARCHITECTURE.md).
/// A file that changed restarts from zero, and its upload is aborted and its record removed (`discardParts`): two
/// versions are never spliced.
extension DownloadEngine {
    // MARK: start of a submission

    /// Reads the job's stored record before the partial file is first opened; true when the read was started (the
    /// transfer starts again once it is back).
    func loadStoredParts(_ transfer: Transfer) -> Bool {
        guard objectStore != nil, let ledger = uploadLedger, !transfer.partsLoaded else { return false }
        transfer.partsLoaded = true
        transfer.phase = .opening
        let id = transfer.id
        Task {
            let record = await ledger.record(jobID: id)
            self.queue.async {
                guard transfer.phase == .opening else {
                    transfer.writer.close { bytes in self.stopped(transfer, bytesOnDisk: bytes) }
                    return
                }
                transfer.storedParts = record
                if record != nil { transfer.parts.multipartSeen = true }
                self.start(transfer)
            }
        }
        return true
    }

    /// What the stored record and the opened partial file make of this start: keep uploading into the record's upload,
    /// restore its parts first, or drop it. True when a restore takes the start over (it calls `opened` when done).
    func takeOver(_ transfer: Transfer, _ record: ObjectUploadRecord, _ found: FileWriter.OpenedPartial) -> Bool {
        let local: [Range<Int64>] = switch found {
        case .contiguous(let bytes): [0..<bytes]
        case .segmented(let sidecar): sidecar.table.writtenRanges
        case .discarded: []
        }
        let live = transfer.parts
        live.record = record
        live.prefixObject = record.prefixObject
        switch PartProgress.handover(record, etag: transfer.etag, lastModified: transfer.lastModified,
                                     size: transfer.bytesExpected, localWritten: local,
                                     split: Transfer.ifRangeValidator(etag: record.etag, lastModified: record.lastModified) != nil) {
        case .discard(let reason):
            logger.notice("stored parts not used", metadata: ["id": "\(transfer.id)", "reason": "\(reason)"])
            discardParts(transfer)
            return false
        case .continueUpload:
            adoptValidators(transfer, record)
            return false
        case .restore(let parts):
            adoptValidators(transfer, record)
            restore(transfer, record, parts: parts, found: found)
            return true
        }
    }

    private func adoptValidators(_ transfer: Transfer, _ record: ObjectUploadRecord) {
        transfer.etag = record.etag
        transfer.lastModified = record.lastModified
        transfer.bytesExpected = record.size
    }

    /// Reads the stored parts back into the partial file (`PartRestore`, as `PartRestorePlan` says), then goes on
    /// as `opened` with what was restored.
    private func restore(_ transfer: Transfer, _ record: ObjectUploadRecord, parts: [ObjectUploadRecord.Part],
                         found: FileWriter.OpenedPartial) {
        guard let client = objectStore else { return }
        let live = transfer.parts, generation = live.generation, id = transfer.id
        let plan = PartRestorePlan(record: record, parts: parts)
        let restore = PartRestore(client: client, writer: transfer.writer, queue: queue, logger: logger, jobID: id,
                                  writeBufferLimit: configuration.writeBufferLimit)
        let validator = transfer.ifRangeValidator
        logger.info("restoring a job's stored parts", metadata: [
            "id": "\(id)", "parts": "\(parts.map(\.number))", "bytes": "\(plan.bytes)", "runs": "\(plan.runs.count)",
        ])
        Task {
            let outcome = await restore.run(plan, validator: validator)
            self.queue.async {
                switch outcome {
                case .unusable(let error):
                    self.logger.warning("stored parts cannot be restored: continuing from the local bytes",
                                        metadata: ["id": "\(id)", "error": "\(error)"])
                    if live.generation == generation { self.discardParts(transfer) }
                    self.opened(transfer, .success(found))
                case .restored(let opened, let kept, let awaiting):
                    if live.generation == generation {
                        live.record = kept
                        live.prefixObject = true
                        live.awaiting = awaiting
                        self.saveRecord(transfer)
                    }
                    self.opened(transfer, opened)
                }
            }
        }
    }

    // MARK: while it downloads

    /// Uploads the parts the written ranges now cover (or starts the upload), within the in-flight limit.
    func pumpParts(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client = objectStore, uploadLedger != nil, transfer.phase == .running, let run = transfer.segmented,
              let size = transfer.bytesExpected, size > 0, transfer.canValidateResume, let filename = transfer.filename else {
            transfer.parts.backlogged = false
            return
        }
        let live = transfer.parts
        // Held back only while parts wait for a slot or the download is a part per connection ahead of the stored
        // parts (`PartUploadPlanner`); every other way out lets the download go on.
        var backlogged = false
        defer { setPartsBacklogged(transfer, run, backlogged) }
        let step = PartUploadPlanner.next(size: size, preferredPartSize: configuration.objectPartSize, etag: transfer.etag,
                                          lastModified: transfer.lastModified, written: run.table.writtenRanges,
                                          pending: Int64(run.pendingWriteBytes), connections: run.target,
                                          state: live.planState, now: Self.monotonicSeconds())
        switch step {
        case .wait:
            return
        case .create(let partSize):
            guard uploadLedger?.mayAct(jobID: transfer.id) ?? true else { return }
            createUpload(transfer, client: client, key: client.location.key(jobID: transfer.id, filename: filename),
                         partSize: partSize, size: size)
        case .upload(let parts, let held):
            // Right before the side effect: a node that lost its lease stores no part.
            guard let record = live.record, parts.isEmpty || (uploadLedger?.mayAct(jobID: transfer.id) ?? true) else { return }
            for number in parts { uploadPart(number, of: transfer, record, client: client) }
            backlogged = held
        }
    }

    /// Records whether parts wait for an upload slot; when they no longer do, connections paused for it go on.
    private func setPartsBacklogged(_ transfer: Transfer, _ run: SegmentedDownload, _ backlogged: Bool) {
        let live = transfer.parts
        guard live.backlogged != backlogged else { return }
        live.backlogged = backlogged
        if !backlogged { resumePausedFetches(transfer, run) }
    }

    private func createUpload(_ transfer: Transfer, client: ObjectStoreClient, key: String, partSize: Int64, size: Int64) {
        let live = transfer.parts, generation = live.generation
        let (etag, lastModified, contentType) = (transfer.etag, transfer.lastModified, transfer.contentType)
        live.creating = true
        live.multipartSeen = true
        Task {
            let result: Result<String, ObjectStoreError>
            do throws(ObjectStoreError) {
                result = .success(try await client.createMultipartUpload(key: key, contentType: contentType))
            } catch {
                result = .failure(error)
            }
            self.queue.async {
                live.creating = false
                switch result {
                case .success(let uploadID) where live.generation == generation:
                    live.record = ObjectUploadRecord(key: key, uploadID: uploadID, partSize: partSize, etag: etag,
                                                     lastModified: lastModified, size: size, prefixObject: live.prefixObject)
                    live.failures = 0
                    self.saveRecord(transfer)
                case .success(let uploadID):
                    Task { try? await client.abortMultipartUpload(key: key, uploadID: uploadID) }
                case .failure(let error):
                    self.partFailed(transfer, error)
                }
                self.partsMayBeIdle(live)
                self.pumpParts(transfer)
            }
        }
    }

    private func uploadPart(_ number: Int, of transfer: Transfer, _ record: ObjectUploadRecord, client: ObjectStoreClient) {
        let live = transfer.parts, generation = live.generation
        let range = PartProgress.range(of: number, size: record.size, partSize: record.partSize)
        let path = spool.partialPath(for: transfer.id)
        let liveCopy = transfer.spec.readWhileWritten ? client.location.livePartKey(jobID: transfer.id, number: number) : nil
        let logger = self.logger
        live.inFlight.insert(number)
        Task {
            let result: Result<UploadedPart, ObjectStoreError>
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor < 0 {
                result = .failure(ObjectStoreError(operation: .uploadPart, kind: .invalidRequest, endpoint: client.location.bucketURL,
                                                   message: "cannot open the partial file: \(SystemError("open", path))"))
            } else {
                // Before the part is recorded: a node reading the record finds the copy of each part it lists.
                if let liveCopy {
                    do throws(ObjectStoreError) {
                        _ = try await client.putObject(key: liveCopy, descriptor: descriptor, offset: range.lowerBound,
                                                       length: Int64(range.count))
                    } catch {
                        logger.notice("a readable copy of a part was not stored", metadata: ["key": "\(liveCopy)", "error": "\(error)"])
                    }
                }
                do throws(ObjectStoreError) {
                    result = .success(try await client.uploadPart(key: record.key, uploadID: record.uploadID, partNumber: number,
                                                                  descriptor: descriptor, offset: range.lowerBound,
                                                                  length: Int64(range.count)))
                } catch {
                    result = .failure(error)
                }
                close(descriptor)
            }
            self.queue.async {
                live.inFlight.remove(number)
                if live.generation == generation, var current = live.record, current.uploadID == record.uploadID {
                    switch result {
                    case .success(let part):
                        self.logger.debug("part stored", metadata: ["id": "\(transfer.id)", "part": "\(part.number)"])
                        current.store(part)
                        live.record = current
                        live.failures = 0
                        self.saveRecord(transfer)
                    case .failure(let error):
                        if error.kind == .notFound { live.record = nil }  // the upload is gone: a new one is started
                        self.partFailed(transfer, error)
                    }
                }
                self.partsMayBeIdle(live)
                self.pumpParts(transfer)
            }
        }
    }

    /// A failed request: waits a back-off (0.5 s doubling, at most 30 s), then the parts are tried again. The download
    /// is not held back meanwhile.
    private func partFailed(_ transfer: Transfer, _ error: ObjectStoreError) {
        guard error.kind != .stopped else { return }
        let live = transfer.parts
        live.failures += 1
        let delay = PartUploadPlanner.retryDelay(failures: live.failures)
        live.notBefore = Self.monotonicSeconds() + delay
        logger.warning("uploading a part failed: tried again later", metadata: [
            "id": "\(transfer.id)", "retryIn": "\(delay)s", "error": "\(error)",
        ])
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in self?.pumpParts(transfer) }
    }

    /// Saves the transfer's record (or its removal) to the ledger, after the save before it.
    func saveRecord(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let ledger = uploadLedger else { return }
        let live = transfer.parts
        guard PartProgress.mayRecord(live.record, awaiting: live.awaiting) else { return }
        live.awaiting = []
        guard !live.saving else { live.unsaved = true; return }
        live.saving = true
        let record = live.record, id = transfer.id, logger = self.logger
        Task {
            await ledger.store(record, jobID: id)
            logger.debug("parts recorded", metadata: ["id": "\(id)", "parts": "\(record?.parts.map(\.number) ?? [])"])
            self.queue.async {
                live.saving = false
                if live.unsaved {
                    live.unsaved = false
                    self.saveRecord(transfer)
                }
            }
        }
    }

    private func partsMayBeIdle(_ live: LiveParts) {
        guard live.isIdle, !live.idleWaiters.isEmpty else { return }
        let waiters = live.idleWaiters
        live.idleWaiters = []
        for waiter in waiters { waiter() }
    }

    /// Runs `then` on the queue once no part request of the transfer is in flight.
    func whenPartsIdle(_ transfer: Transfer, then: @escaping () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        if transfer.parts.isIdle { then() } else { transfer.parts.idleWaiters.append(then) }
    }

    // MARK: the end of an upload

    /// The bytes the upload holds are no longer the file's (a restart from zero, changed validators): abort it,
    /// delete a stored prefix, remove the record.
    func discardParts(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        let live = transfer.parts
        guard uploadLedger != nil, live.record != nil || live.prefixObject else { return }
        live.generation += 1
        if let record = live.record, let client = objectStore {
            let prefixObject = live.prefixObject
            if transfer.spec.readWhileWritten { deleteLiveCopies(jobID: transfer.id, record) }
            Task {
                try? await client.abortMultipartUpload(key: record.key, uploadID: record.uploadID)
                if prefixObject { try? await client.deleteObject(key: record.key) }
            }
        }
        live.record = nil
        live.prefixObject = false
        live.awaiting = []
        live.failures = 0
        live.notBefore = 0
        saveRecord(transfer)
    }

    /// The upload was completed into the finished object: the record has done its work.
    func partsCompleted(_ transfer: Transfer) {
        let live = transfer.parts
        guard uploadLedger != nil, live.record != nil || live.prefixObject else { return }
        if let record = live.record, transfer.spec.readWhileWritten { deleteLiveCopies(jobID: transfer.id, record) }
        live.generation += 1
        live.record = nil
        live.prefixObject = false
        live.awaiting = []
        saveRecord(transfer)
    }

    /// Deletes the readable copies of a fetch-through job's parts (`ObjectStoreLocation.livePartKey`) once its upload
    /// is completed or dropped (one already gone is no error). A copy a node killed meanwhile leaves is deleted by the
    /// node finishing or cancelling the job.
    private func deleteLiveCopies(jobID id: String, _ record: ObjectUploadRecord) {
        guard let client = objectStore, record.partSize > 0 else { return }
        let count = Int((record.size + record.partSize - 1) / record.partSize)
        Task {
            for number in 1...max(1, count) {
                try? await client.deleteObject(key: client.location.livePartKey(jobID: id, number: number))
            }
        }
    }

    /// A cancelled or deleted job: aborts its unfinished upload (the one running here, else the stored record's),
    /// deletes a stored prefix object and the parts' readable copies (a fetch job's; the node may not know whether it
    /// is one), and removes the record.
    func abandonParts(jobID: String, live: LiveParts?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client = objectStore, let ledger = uploadLedger else { return }
        let known = live?.record
        if let live {
            live.generation += 1
            live.record = nil
            live.prefixObject = false
            live.awaiting = []
        }
        Task {
            var found = known
            if found == nil { found = await ledger.record(jobID: jobID) }
            guard let record = found else { return }
            try? await client.abortMultipartUpload(key: record.key, uploadID: record.uploadID)
            if record.prefixObject { try? await client.deleteObject(key: record.key) }
            self.queue.async { self.deleteLiveCopies(jobID: jobID, record) }
            await ledger.store(nil, jobID: jobID)
        }
    }
}
