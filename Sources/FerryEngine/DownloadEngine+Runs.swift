import CCurl
import Dispatch
import FerryCore
import Foundation

/// One run of a transfer: open the partial file, begin the run (the rest of the file, or the saved segments),
/// and end it in the finished file, a restart, a retry, a wait or a failure. Everything here runs on `queue`.
extension DownloadEngine {
    /// Starts a run (the scheduling queue made the transfer active).
    func start(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        if let free = freeBytes(), free < configuration.minFreeSpace {
            waitForSpace(transfer)
            return
        }
        if loadStoredParts(transfer) { return }
        transfer.phase = .opening
        let keep = !transfer.discardOnNextStart && (transfer.spec.resume != nil || transfer.hasAcceptedResponse)
        transfer.discardOnNextStart = false
        transfer.writer.openPartial(keepExisting: keep, validator: transfer.ifRangeValidator, total: transfer.bytesExpected) { result in
            self.opened(transfer, result)
        }
    }

    /// The partial file is open (and its bytes hashed): continue its saved segments, or ask for the rest of the
    /// file from the bytes on disk when that is safe.
    func opened(_ transfer: Transfer, _ result: Result<FileWriter.OpenedPartial, SystemError>) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard transfer.phase == .opening else {
            transfer.writer.close { bytes in self.stopped(transfer, bytesOnDisk: bytes) }
            return
        }
        if let record = transfer.storedParts.take(), case .success(let found) = result, takeOver(transfer, record, found) { return }
        switch result {
        case .failure(let error):
            transfer.phase = .running
            attemptFailed(transfer, .write(error))
        case .success(.segmented(let sidecar)):
            resumeSplit(transfer, sidecar)
        case .success(.discarded(let reason)):
            announceRestart(transfer, reason: reason)
            begin(transfer, SegmentedDownload.rest(from: 0, requestURL: firstRequestURL(transfer)))
        case .success(.contiguous(let onDisk)):
            begin(transfer, SegmentedDownload.rest(from: resumableOffset(transfer, onDisk: onDisk), requestURL: firstRequestURL(transfer)))
        }
    }

    /// The offset to continue from: the bytes on disk, or 0 (they are discarded) when nothing can validate a
    /// resume or they are more than the file.
    private func resumableOffset(_ transfer: Transfer, onDisk: Int64) -> Int64 {
        guard onDisk > 0 else { return 0 }
        let reason: String
        if !transfer.canValidateResume {
            reason = transfer.source.dialect == .http ? "no strong ETag or Last-Modified to resume safely" : "no size was recorded to resume safely"
        } else if let total = transfer.bytesExpected, onDisk > total {
            reason = "the partial file is larger than the file"
        } else {
            return onDisk
        }
        transfer.writer.truncate { _ in }
        announceRestart(transfer, reason: reason)
        return 0
    }

    /// Continues a split download from its saved segments (the partial file is open and its prefix hashed).
    private func resumeSplit(_ transfer: Transfer, _ sidecar: SegmentSidecar) {
        let table = sidecar.table
        if let refusal = claimSpace(transfer, size: table.total) {
            transfer.phase = .running
            attemptFailed(transfer, .quotaExceeded(refusal))
            return
        }
        if transfer.ifRangeValidator == nil {
            if sidecar.validator.hasPrefix("\"") { transfer.etag = sidecar.validator } else { transfer.lastModified = sidecar.validator }
        }
        transfer.bytesExpected = table.total
        begin(transfer, SegmentedDownload(
            table: table, validator: sidecar.validator, target: splitter.wantedConnections(transfer, total: table.total),
            requestURL: firstRequestURL(transfer)))
    }

    /// Makes `run` the transfer's current run and connects its fetches.
    private func begin(_ transfer: Transfer, _ run: SegmentedDownload) {
        run.saves = SegmentSaves(savedBytes: run.table.bytesWritten, at: Self.monotonicSeconds())
        transfer.segmented = run
        transfer.phase = .running
        emit(.started(id: transfer.id, offset: run.startBytes))
        fillConnections(transfer)
        finishIfDone(transfer)
        applyRateLimits()
    }

    /// Whether the address libcurl is about to connect to is allowed; `refuse` gets the reason when it is not.
    func admits(_ bytes: [UInt8], refuse: (String) -> Void) -> Bool {
        guard let address = IPAddress(bytes: bytes) else {
            refuse("refused to connect to an address that is not IPv4 or IPv6")
            return false
        }
        guard let refusal = configuration.destinations.refusal(of: address) else { return true }
        refuse(refusal)
        return false
    }

    /// Claims room for the whole file under the spool's quota (`SpoolAllowance`); the refusal, or nil when it fits.
    func claimSpace(_ transfer: Transfer, size: Int64?) -> String? {
        guard let allowance = disk.allowance else { return nil }
        switch allowance.claim(jobID: transfer.id, size: size) {
        case .granted(let limit):
            transfer.spoolLimit = limit
            return nil
        case .refused(let reason):
            return reason
        }
    }

    /// A transfer starts over from zero and its bytes on disk are discarded (the origin ignored the range, the file
    /// changed, nothing can validate a resume): logged, and told to the service, which says so in the job's event.
    func announceRestart(_ transfer: Transfer, reason: String) {
        logger.notice("download restarts from zero", metadata: ["id": "\(transfer.id)", "reason": "\(reason)"])
        for index in transfer.sources.indices { transfer.sources[index].bytesReceived = 0 }
        discardParts(transfer)
        emit(.restarted(id: transfer.id, reason: reason))
    }

    /// Records the final URL and the file's name and size, and emits `.responded`. `head` is nil for FTP and SFTP,
    /// which neither redirect nor name the file: their final URL is the job's own (libcurl's would say `ftp://` for
    /// `ftps://`).
    func announce(_ transfer: Transfer, _ head: ResponseHead?, total: Int64?, effectiveURL: String?, offset: Int64) {
        transfer.bytesExpected = total
        let finalURL = (transfer.source == .http ? effectiveURL : nil) ?? transfer.url.normalized
        transfer.finalURL = finalURL
        if transfer.filename == nil {
            let name = Filename.resolve(requested: nil, contentDisposition: head?.contentDisposition, finalURL: finalURL)
            transfer.filename = storage.reserve(filename: name, for: transfer.id)
        }
        var metadata = TransferMetadata(
            finalURL: finalURL, filename: transfer.filename ?? "download", contentType: transfer.contentType,
            bytesExpected: total, etag: transfer.etag, lastModified: transfer.lastModified, offset: offset)
        if let head {
            metadata.caching = .init(cacheControl: head["cache-control"], expires: head["expires"], date: head["date"])
        }
        emit(.responded(id: transfer.id, metadata))
    }

    // MARK: the end of a run

    /// Every byte received and written and no exchange left: verify and move the file.
    func finishIfDone(_ transfer: Transfer) {
        guard transfer.phase == .running, let run = transfer.segmented, run.table.isComplete,
              run.pendingWriteBytes == 0, run.connectedCount == 0 else { return }
        run.fetches.removeAll()
        transfer.restartsInARow = 0
        finish(transfer)
    }

    /// The body is complete: make it durable, verify it, move it into `files/`.
    ///
    /// A transfer whose writer is not `digestFirst` (no checksum to verify, no delivery, no object store) is moved
    /// and reported `finished` once its file is durable; its SHA-256 follows (`digestTrailed`).
    ///
    /// The move is a group commit: each file is fsynced on its own writer queue (side by side), then the files
    /// that reach this point close together are moved into `files/` as one group, sharing one fsync of each
    /// directory and one file of finish records (`Spool.moveToFiles(_:)` on the disk queue, `disk.finishGroups`),
    /// before any of them is reported finished.
    private func finish(_ transfer: Transfer) {
        // The slot stays taken until the final event: a job is "downloading" until it is finished.
        transfer.phase = .finishing
        guard transfer.writer.digestFirst else {
            transfer.writer.finishAhead(completion: { result in
                switch result {
                case .failure(let error):
                    transfer.phase = .running
                    self.attemptFailed(transfer, .write(error))
                case .success(let size):
                    self.keep(self.pendingFinish(transfer, size: size, sha256: nil))
                }
            }, digested: { result in self.digestTrailed(transfer, result) })
            return
        }
        transfer.writer.finish { result in
            switch result {
            case .failure(let error):
                transfer.phase = .running
                self.attemptFailed(transfer, .write(error))
            case .success(let (size, digests)):
                if let expected = transfer.spec.checksum, !digests.matches(expected) {
                    // The job's final numbers: what was received, though the file is discarded.
                    self.emit(.progress(id: transfer.id, TransferProgress(
                        bytesReceived: size, bytesExpected: transfer.bytesExpected, bytesPerSecond: 0, eta: nil)))
                    transfer.discardOnGiveUp = true
                    self.giveUp(transfer, FailureClassifier.classify(.checksumMismatch(expected: expected, actual: digests.hex[expected.algorithm] ?? "")).failure)
                    return
                }
                self.keep(self.pendingFinish(transfer, size: size, sha256: digests.sha256))
            }
        }
    }

    private func pendingFinish(_ transfer: Transfer, size: Int64, sha256: String?) -> PendingFinish {
        let finalURL = transfer.finalURL ?? transfer.url.normalized
        let name = transfer.filename ?? Filename.resolve(requested: nil, contentDisposition: nil, finalURL: finalURL)
        return PendingFinish(transfer: transfer, finish: FinishingFile(jobID: transfer.id, filename: name, size: size, sha256: sha256))
    }

    /// The digest of a file reported (or about to be reported) finished without it: carried by `.finished` when it
    /// came first, else emitted as `.digested`. A failure to read the file back is logged; the job keeps no
    /// `sha256` until the next start-up computes it (`digestFinished`).
    private func digestTrailed(_ transfer: Transfer, _ result: Result<FileDigests, SystemError>) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch result {
        case .failure(let error):
            logger.error("hashing the finished file failed", metadata: ["id": "\(transfer.id)", "error": "\(error)"])
        case .success(let digests):
            guard transfer.finishReported else { return transfer.trailingSHA256 = digests.sha256 }
            emit(.digested(id: transfer.id, sha256: digests.sha256))
        }
    }

    /// A synced file waiting for its group's move into `files/`.
    struct PendingFinish {
        let transfer: Transfer
        let finish: FinishingFile
    }

    /// Moves a group of synced files into `files/` (on `diskQueue`), reports each, then moves the group that
    /// gathered meanwhile.
    func moveToFiles(_ group: [PendingFinish]) {
        dispatchPrecondition(condition: .onQueue(queue))
        let spool = self.spool, storage = self.storage
        let finishes = group.map(\.finish)
        diskQueue.async {
            let results = storage.store(finishes)
            self.queue.async {
                for pending in group {
                    let result = results[pending.finish.jobID] ?? .failure(SystemError("link", spool.partialPath(for: pending.finish.jobID), errno: EINVAL))
                    self.moved(pending, result)
                }
                if let next = self.disk.finishGroups.groupEnded() { self.moveToFiles(next) }
            }
        }
    }

    /// One file of a moved group: finished (or removed again when the job was cancelled meanwhile).
    private func moved(_ pending: PendingFinish, _ result: Result<String, SystemError>) {
        let transfer = pending.transfer, id = transfer.id, spool = self.spool, storage = self.storage, finish = pending.finish
        switch result {
        case .failure(let error):
            diskQueue.async { spool.removeFinishRecord(jobID: id) }  // the job is not finished: nothing to adopt
            giveUp(transfer, JobFailure(code: .internalError, message: "moving the finished file failed: \(error)"))
        case .success(let filename):
            if transfer.stopIntent == .cancel {
                deleteObject(jobID: id, filename: finish.filename)
                storage.release(jobID: id)
                diskQueue.async {
                    storage.removeFinished(filename: filename)
                    spool.removeFinishRecord(jobID: id)
                }
            } else {
                var file = FinishedFile(
                    filename: filename, path: storage.location(ofFinished: filename), size: finish.size,
                    sha256: finish.sha256 ?? transfer.trailingSHA256,
                    contentType: transfer.contentType, finalURL: transfer.finalURL ?? transfer.url.normalized,
                    etag: transfer.etag, lastModified: transfer.lastModified)
                file.sourceBytes = sourceBytes(transfer)
                transfer.finishReported = true
                emit(.finished(id: id, file))
            }
            forget(transfer)
        }
    }

    /// The file changed (or the origin ignores ranges): drop the run and start again from zero, at most twice in
    /// a row.
    func restart(_ transfer: Transfer, reason: String, singleConnection: Bool) {
        disconnectFetches(transfer)
        transfer.segmented = nil
        if singleConnection { transfer.singleConnectionOnly = true }
        transfer.discardOnNextStart = true
        transfer.restartsInARow += 1
        guard transfer.restartsInARow <= 2 else {
            attemptFailed(transfer, .unusableResponse(reason))
            return
        }
        announceRestart(transfer, reason: reason)
        start(transfer)
        applyRateLimits()
    }

    /// A failed run: close the writer (keeping the bytes), then retry, wait for space, or give up.
    func attemptFailed(_ transfer: Transfer, _ cause: FailureCause) {
        // A file over the quota gives its bytes back: kept, they would hold the spool full for nothing.
        if case .quotaExceeded = cause { transfer.discardOnGiveUp = true }
        // Bytes judged by a size the server got wrong: a resume would judge them by the same size and could take
        // them for the whole file, so the next attempt starts from zero and giving up removes them.
        if case .sizeUnderstated = cause {
            transfer.discardOnNextStart = true
            transfer.discardOnGiveUp = true
        }
        attemptFailed(transfer, verdict: FailureClassifier.classify(cause))
    }

    /// Ends the run (every fetch) and acts on `verdict` once the writer is closed.
    func attemptFailed(_ transfer: Transfer, verdict: FailureVerdict) {
        dispatchPrecondition(condition: .onQueue(queue))
        disconnectFetches(transfer)
        transfer.phase = .stopping
        closeWriter(transfer) { bytes in
            if self.lifecycle.shuttingDown, transfer.stopIntent == nil { transfer.stopIntent = .shutdown }
            if transfer.stopIntent != nil {
                self.stopped(transfer, bytesOnDisk: bytes)
                return
            }
            switch verdict {
            case .retry(let failure, let retryAfter):
                self.retryLater(transfer, failure, retryAfter: retryAfter)
            case .waitForSpace:
                self.waitForSpace(transfer)
            case .giveUp(let failure):
                self.giveUp(transfer, failure)
            }
        }
    }

    func giveUp(_ transfer: Transfer, _ failure: JobFailure) {
        if transfer.stopIntent == .cancel {
            stopped(transfer, bytesOnDisk: 0)
            return
        }
        logger.info("transfer failed", metadata: ["id": "\(transfer.id)", "code": "\(failure.code)", "message": "\(failure.message)"])
        if transfer.discardOnGiveUp {
            let id = transfer.id, spool = self.spool
            diskQueue.async { spool.removePartial(jobID: id) }
        }
        emit(.failed(id: transfer.id, failure))
        forget(transfer)
    }

    /// Waits out the back-off as a job (`.waiting(.retrying)`, its scheduling slot given up), then queues it again.
    private func retryLater(_ transfer: Transfer, _ failure: JobFailure, retryAfter: Double?) {
        transfer.failures += 1
        guard configuration.retry.shouldRetry(afterAttempt: transfer.failures) else {
            giveUp(transfer, failure)
            return
        }
        let delay = configuration.retry.delay(afterAttempt: transfer.failures, retryAfter: retryAfter, jitter: Double.random(in: 0...1))
        scheduling.remove(transfer.id)
        transfer.phase = .retryWait
        let work = DispatchWorkItem { [weak self, weak transfer] in
            guard let self, let transfer, transfer.phase == .retryWait, self.transfers[transfer.id] === transfer else { return }
            transfer.retryWork = nil
            self.enqueue(transfer)
        }
        transfer.retryWork = work
        emit(.waiting(id: transfer.id, reason: .retrying(at: Date(timeIntervalSinceNow: delay), attempt: transfer.failures, failure: failure)))
        queue.asyncAfter(deadline: .now() + delay, execute: work)
        pump()
    }

    /// Closes the transfer's writer and ends its run; a split run's exact table is then saved (every write
    /// completion has arrived before the close's, and the close synced the file). `done` gets the bytes on disk.
    func closeWriter(_ transfer: Transfer, _ done: @escaping @Sendable (Int64) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let run = transfer.segmented else {
            transfer.writer.close(completion: done)
            return
        }
        transfer.writer.close { bytes in
            guard transfer.segmented === run else {
                done(run.isSplit ? run.table.bytesWritten : bytes)
                return
            }
            transfer.segmented = nil
            guard let sidecar = run.sidecar, transfer.stopIntent != .cancel else {
                done(run.isSplit ? run.table.bytesWritten : bytes)
                return
            }
            transfer.writer.saveSegments(sidecar) { error in
                if let error { self.logger.warning("saving segment state failed", metadata: ["id": "\(transfer.id)", "error": "\(error)"]) }
                done(run.table.bytesWritten)
            }
        }
    }
}
