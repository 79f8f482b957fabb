import FerryCore
import Foundation

/// Parts uploaded while a download runs, and a job taken over continuing from them (with an object store and an
/// `uploadLedger`, i.e. on a cluster's store).
///
/// Who owns what: the engine queue owns each transfer's `LiveParts`; the ledger (the cluster's store, fenced by job
/// ownership) keeps its record, saved after every part stored. As the written prefix of the file (`SegmentTable`'s
/// contiguous prefix, bytes written under the validators of the accepted answer) covers a part, that part is read
/// from the partial file and uploaded (`UploadPart`) beside the download, at most `partUploadsInFlight` at a time; a
/// failed request waits a back-off and is tried again, and never fails the download: what is missing is uploaded at
/// the finish (`FinishedObjectUpload` with the existing upload), which completes the upload with every part in order.
///
/// A node starting a job reads its record first (`loadStoredParts`). When the record's validators are the job's and
/// its parts reach further than the local bytes, they are restored (`restore`): the recorded upload is completed
/// into the job's key (the stored prefix as an object), read back into the partial file through the writer (so the
/// digest covers them as they come), and a new upload is started at the same key with those parts copied inside the
/// store (`UploadPartCopy`: no byte sent again); the download then resumes from the restored bytes with the stored
/// validators, as any resume does (`ResumeDecision`). A file that changed restarts from zero, and its upload is
/// aborted and its record removed (`discardParts`): two versions are never spliced.
extension DownloadEngine {
    /// Part uploads one transfer may have in flight.
    static let partUploadsInFlight = 2

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
                self.start(transfer)
            }
        }
        return true
    }

    /// What the stored record and the opened partial file make of this start: keep uploading into the record's upload,
    /// restore its parts first, or drop it. True when a restore takes the start over (it calls `opened` when done).
    func takeOver(_ transfer: Transfer, _ record: ObjectUploadRecord, _ found: FileWriter.OpenedPartial) -> Bool {
        let local: Int64 = switch found {
        case .contiguous(let bytes): bytes
        case .segmented(let sidecar): sidecar.table.contiguousPrefix
        case .discarded: 0
        }
        let live = transfer.parts
        live.record = record
        live.prefixObject = record.prefixObject
        switch PartProgress.handover(record, etag: transfer.etag, lastModified: transfer.lastModified,
                                     size: transfer.bytesExpected, localBytes: local) {
        case .discard(let reason):
            logger.notice("stored parts not used", metadata: ["id": "\(transfer.id)", "reason": "\(reason)"])
            discardParts(transfer)
            return false
        case .continueUpload:
            adoptValidators(transfer, record)
            return false
        case .restore(let parts, let bytes):
            adoptValidators(transfer, record)
            restore(transfer, record, parts: parts, bytes: bytes, found: found)
            return true
        }
    }

    private func adoptValidators(_ transfer: Transfer, _ record: ObjectUploadRecord) {
        transfer.etag = record.etag
        transfer.lastModified = record.lastModified
        transfer.bytesExpected = record.size
    }

    /// Reads the stored parts back into the partial file, then goes on as `opened` with the bytes restored.
    private func restore(_ transfer: Transfer, _ record: ObjectUploadRecord, parts: [ObjectUploadRecord.Part], bytes: Int64,
                         found: FileWriter.OpenedPartial) {
        guard let client = objectStore else { return }
        let live = transfer.parts, generation = live.generation, id = transfer.id, logger = self.logger
        logger.info("restoring a job's stored parts", metadata: ["id": "\(id)", "parts": "\(parts.count)", "bytes": "\(bytes)"])
        Task {
            // 1. The stored parts as the object at the key (done already if a node stopped after this step).
            do throws(ObjectStoreError) {
                let stored = parts.map { UploadedPart(number: $0.number, etag: $0.etag, size: $0.size) }
                do throws(ObjectStoreError) {
                    _ = try await client.completeMultipartUpload(key: record.key, uploadID: record.uploadID, parts: stored)
                } catch where error.kind == .notFound || error.kind == .rejected {
                    let info = try await client.headObject(key: record.key)
                    guard info.size == bytes else { throw error }
                }
            } catch {
                logger.warning("stored parts cannot be restored: continuing from the local bytes",
                               metadata: ["id": "\(id)", "error": "\(error)"])
                self.queue.async {
                    if live.generation == generation { self.discardParts(transfer) }
                    self.opened(transfer, .success(found))
                }
                return
            }
            // 2. Read back through the writer, which hashes the bytes in order.
            let restored = await self.readBack(transfer, key: record.key, bytes: bytes, client: client)
            // 3. A new upload at the key, its first parts copied from the stored prefix inside the store.
            var next: ObjectUploadRecord?
            if restored == bytes {
                do throws(ObjectStoreError) {
                    let uploadID = try await client.createMultipartUpload(key: record.key, contentType: nil)
                    var copy = ObjectUploadRecord(key: record.key, uploadID: uploadID, partSize: record.partSize, etag: record.etag,
                                                  lastModified: record.lastModified, size: record.size, prefixObject: true)
                    next = copy
                    for part in parts {
                        let range = PartProgress.range(of: part.number, size: record.size, partSize: record.partSize)
                        let copied = try await client.uploadPartCopy(key: record.key, uploadID: uploadID, partNumber: part.number,
                                                                     sourceKey: record.key, range: range.lowerBound...(range.upperBound - 1))
                        copy.store(.init(number: copied.number, etag: copied.etag, size: copied.size))
                        next = copy
                    }
                } catch {
                    logger.notice("copying restored parts failed: they are uploaded from the spool",
                                  metadata: ["id": "\(id)", "error": "\(error)"])
                }
            }
            let kept = next
            self.queue.async {
                if live.generation == generation {
                    live.record = kept
                    live.prefixObject = true
                    self.saveRecord(transfer)
                }
                self.opened(transfer, .success(.contiguous(bytes: restored)))
            }
        }
    }

    /// Empties the partial file and writes the first `bytes` of the object at `key` into it; returns how many bytes
    /// were written, contiguous from 0 (fewer when reading failed). A read that ends early (the store dropped the
    /// connection, a chunk could not be read) continues from the bytes written, up to `restoreReads` reads.
    private func readBack(_ transfer: Transfer, key: String, bytes: Int64, client: ObjectStoreClient) async -> Int64 {
        let writer = transfer.writer
        let emptied: Result<Int64, SystemError> = await withCheckedContinuation { continuation in
            writer.open(keepExisting: false) { continuation.resume(returning: $0) }
        }
        guard case .success = emptied else { return 0 }
        var written: Int64 = 0
        for read in 1...Self.restoreReads where written < bytes {
            if read > 1 { try? await Task.sleep(for: .milliseconds(250 << min(read - 2, 4))) }
            let sink = RestoreSink(writer: writer, from: written, limit: Int64(configuration.writeBufferLimit))
            let reading = ObjectReading()
            sink.reading = reading
            var failure: ObjectStoreError?
            do throws(ObjectStoreError) {
                _ = try await client.getObject(key: key, range: written...(bytes - 1), reading: reading) { chunk in sink.take(chunk) }
            } catch {
                failure = error
            }
            let before = written
            written = await withCheckedContinuation { continuation in
                queue.async { sink.whenWritten { continuation.resume(returning: $0) } }
            }
            if let failure {
                logger.warning("reading stored parts back ended early", metadata: [
                    "id": "\(transfer.id)", "read": "\(read)", "from": "\(before)", "written": "\(written)", "of": "\(bytes)",
                    "error": "\(failure)",
                ])
                guard failure.isRetryable else { break }
            } else if written < bytes {
                logger.warning("reading stored parts back ended early", metadata: [
                    "id": "\(transfer.id)", "read": "\(read)", "from": "\(before)", "written": "\(written)", "of": "\(bytes)",
                ])
            }
        }
        return written
    }

    /// Reads of the stored prefix a restore makes before it continues from what it has.
    static let restoreReads = 5

    // MARK: while it downloads

    /// Uploads the parts the written prefix now covers (or starts the upload), within the in-flight limit.
    func pumpParts(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client = objectStore, uploadLedger != nil, transfer.phase == .running, let run = transfer.segmented,
              let size = transfer.bytesExpected, size > 0, transfer.canValidateResume, let filename = transfer.filename else { return }
        let live = transfer.parts
        guard !live.creating, Self.monotonicSeconds() >= live.notBefore else { return }
        let prefix = run.table.contiguousPrefix
        guard let record = live.record else {
            let partSize = PartPlan.partSize(for: size, preferred: configuration.objectPartSize)
            // A file of one part is stored at its finish.
            guard size > partSize, prefix >= partSize else { return }
            createUpload(transfer, client: client, key: client.location.key(jobID: transfer.id, filename: filename),
                         partSize: partSize, size: size)
            return
        }
        guard record.size == size, record.etag == transfer.etag, record.lastModified == transfer.lastModified else { return }
        let done = Set(record.parts.map(\.number)).union(live.inFlight)
        for number in PartProgress.ready(size: size, partSize: record.partSize, prefix: prefix, done: done,
                                         limit: Self.partUploadsInFlight - live.inFlight.count) {
            uploadPart(number, of: transfer, record, client: client)
        }
    }

    private func createUpload(_ transfer: Transfer, client: ObjectStoreClient, key: String, partSize: Int64, size: Int64) {
        let live = transfer.parts, generation = live.generation
        let (etag, lastModified, contentType) = (transfer.etag, transfer.lastModified, transfer.contentType)
        live.creating = true
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
        live.inFlight.insert(number)
        Task {
            let result: Result<UploadedPart, ObjectStoreError>
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            if descriptor < 0 {
                result = .failure(ObjectStoreError(operation: .uploadPart, kind: .invalidRequest, endpoint: client.location.bucketURL,
                                                   message: "cannot open the partial file: \(SystemError("open", path))"))
            } else {
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
                        current.store(.init(number: part.number, etag: part.etag, size: part.size))
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

    /// A failed request: waits a back-off (0.5 s doubling, at most 30 s), then the parts are tried again.
    private func partFailed(_ transfer: Transfer, _ error: ObjectStoreError) {
        guard error.kind != .stopped else { return }
        let live = transfer.parts
        live.failures += 1
        let delay = min(30, 0.5 * pow(2, Double(min(live.failures, 8) - 1)))
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
        guard !live.saving else { live.unsaved = true; return }
        live.saving = true
        let record = live.record, id = transfer.id
        Task {
            await ledger.store(record, jobID: id)
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
            Task {
                try? await client.abortMultipartUpload(key: record.key, uploadID: record.uploadID)
                if prefixObject { try? await client.deleteObject(key: record.key) }
            }
        }
        live.record = nil
        live.prefixObject = false
        live.failures = 0
        live.notBefore = 0
        saveRecord(transfer)
    }

    /// The upload was completed into the finished object: the record has done its work.
    func partsCompleted(_ transfer: Transfer) {
        let live = transfer.parts
        guard uploadLedger != nil, live.record != nil || live.prefixObject else { return }
        live.generation += 1
        live.record = nil
        live.prefixObject = false
        saveRecord(transfer)
    }

    /// A cancelled or deleted job: aborts its unfinished upload (the one running here, else the stored record's),
    /// deletes a stored prefix object, and removes the record.
    func abandonParts(jobID: String, live: LiveParts?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let client = objectStore, let ledger = uploadLedger else { return }
        let known = live?.record
        if let live {
            live.generation += 1
            live.record = nil
            live.prefixObject = false
        }
        Task {
            var found = known
            if found == nil { found = await ledger.record(jobID: jobID) }
            guard let record = found else { return }
            try? await client.abortMultipartUpload(key: record.key, uploadID: record.uploadID)
            if record.prefixObject { try? await client.deleteObject(key: record.key) }
            await ledger.store(nil, jobID: jobID)
        }
    }
}

/// Takes the bytes of a `GetObject` into a writer at increasing offsets, pausing the read while more than `limit`
/// bytes wait to be written. Confined to the engine queue (the client's sink runs there, and so do the writer's
/// completions).
final class RestoreSink: @unchecked Sendable {
    private let writer: FileWriter
    private let limit: Int64
    var reading: ObjectReading?
    private var offset: Int64
    private var pending: Int64 = 0
    private var written: Int64
    private var failed = false
    private var paused = false
    private var done: ((Int64) -> Void)?

    /// Takes the object's bytes from offset `from` of the file (bytes before it are written already).
    init(writer: FileWriter, from: Int64, limit: Int64) {
        self.writer = writer
        self.offset = from
        self.written = from
        self.limit = max(1 << 20, limit)
    }

    func take(_ chunk: UnsafeRawBufferPointer) -> ObjectBodyDisposition {
        guard !failed else { return .stop }
        guard pending < limit else { paused = true; return .pause }
        let bytes = [UInt8](chunk), at = offset
        offset += Int64(bytes.count)
        pending += Int64(bytes.count)
        writer.write(bytes, at: at) { [self] error in
            pending -= Int64(bytes.count)
            if error != nil { failed = true } else if !failed { written = at + Int64(bytes.count) }
            if paused, pending < limit / 2 {
                paused = false
                reading?.resume()
            }
            finishIfWritten()
        }
        return .consumed
    }

    /// Calls `done` with the bytes written (contiguous from 0, `from` included) once every write has completed.
    func whenWritten(_ done: @escaping (Int64) -> Void) {
        self.done = done
        finishIfWritten()
    }

    private func finishIfWritten() {
        guard pending == 0, let done else { return }
        self.done = nil
        done(written)
    }
}
