import CCurl
import Dispatch
import FerryCore
import Foundation

/// One attempt of a transfer: open the partial file, build the request, judge the response, write the body,
/// and end in success, a retry, a wait or a failure. Everything here runs on `queue`.
extension DownloadEngine {
    /// Starts an attempt (the scheduling queue made the transfer active).
    func start(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        if let free = spool.freeBytes(), free < configuration.minFreeSpace {
            waitForSpace(transfer)
            return
        }
        transfer.phase = .opening
        let keep = !transfer.discardOnNextStart && (transfer.spec.resume != nil || transfer.hasAcceptedResponse)
        transfer.discardOnNextStart = false
        transfer.writer.openPartial(keepExisting: keep, validator: transfer.ifRangeValidator, total: transfer.bytesExpected) { result in
            self.opened(transfer, result)
        }
    }

    /// The partial file is open (and its bytes hashed): send the request, resuming when that is safe, or continue
    /// the segments of a segmented download.
    func opened(_ transfer: Transfer, _ result: Result<FileWriter.OpenedPartial, SystemError>) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard transfer.phase == .opening else {
            transfer.writer.close { bytes in self.stopped(transfer, bytesOnDisk: bytes) }
            return
        }
        let onDisk: Int64
        switch result {
        case .failure(let error):
            transfer.phase = .running
            attemptFailed(transfer, .write(error))
            return
        case .success(.segmented(let sidecar)):
            resumeSegments(transfer, sidecar)
            return
        case .success(.discarded(let reason)):
            announceRestart(transfer, reason: reason)
            onDisk = 0
        case .success(.contiguous(let size)):
            onDisk = size
        }
        var offset = onDisk
        if offset > 0 {
            var reason: String?
            if transfer.ifRangeValidator == nil {
                reason = "no strong ETag or Last-Modified to resume safely"
            } else if let total = transfer.bytesExpected, offset > total {
                reason = "the partial file is larger than the file"
            }
            if let reason {
                offset = 0
                transfer.writer.truncate { _ in }
                announceRestart(transfer, reason: reason)
            }
        }
        do {
            try launch(transfer, offset: offset)
        } catch {
            transfer.phase = .running
            attemptFailed(transfer, .internalError("\(error)"))
        }
    }

    /// Builds the easy handle and adds it to the multi.
    private func launch(_ transfer: Transfer, offset: Int64) throws(CurlError) {
        let easy = try CurlEasy()
        do {
            try configure(easy, for: transfer, offset: offset)
            transfer.resetAttempt(offset: offset)
            easy.onHeaderLine = { [unowned self] line in headerLine(transfer, line) }
            easy.onBody = { [unowned self] bytes in body(transfer, bytes) }
            easy.onConnect = { [unowned self] bytes in admits(bytes) { transfer.refusal = $0 } }
            transfer.easy = easy
            transfer.phase = .running
            try multi.add(easy) { [unowned self] code in attemptEnded(transfer, code) }
        } catch {
            transfer.easy = nil
            easy.cleanup()
            throw error
        }
        emit(.started(id: transfer.id, offset: offset))
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

    private func configure(_ easy: CurlEasy, for transfer: Transfer, offset: Int64) throws(CurlError) {
        try configureRequest(easy, for: transfer, url: transfer.url.normalized)
        var lines = RequestHeaderFilter.lines(transfer.spec.headers)
        if offset > 0 {
            lines.append("Range: bytes=\(offset)-")
            if let validator = transfer.ifRangeValidator { lines.append("If-Range: \(validator)") }
        }
        try easy.setHeaders(lines)
    }

    /// The options every request of a transfer shares (URL, protocols, redirects, timeouts, buffer, limits).
    func configureRequest(_ easy: CurlEasy, for transfer: Transfer, url: String) throws(CurlError) {
        let c = configuration
        try easy.set(CURLOPT_URL, url)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, 1)
        try easy.set(CURLOPT_MAXREDIRS, c.maxRedirects)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(c.connectTimeout * 1000))
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, c.lowSpeedLimit)
        try easy.set(CURLOPT_LOW_SPEED_TIME, c.lowSpeedTime)
        // 512 KiB by default (see `receiveBufferSize` for the measurement); smaller under a speed limit.
        try easy.set(CURLOPT_BUFFERSIZE, receiveBufferSize(for: transfer))
        try easy.set(CURLOPT_HTTP_VERSION, ferry_http_version_2tls())
        try easy.set(CURLOPT_USERAGENT, c.userAgent)
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        // Never a proxy from `http_proxy`/`https_proxy`/`ALL_PROXY`: the destination guard would see only the proxy's
        // address while the proxy fetched whatever name it was given.
        try easy.set(CURLOPT_PROXY, "")
        if let max = c.maxFileSize { try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: max) }
    }

    // MARK: libcurl callbacks (on `queue`, inside a libcurl call: never remove a handle here)

    private func headerLine(_ transfer: Transfer, _ line: String) -> Bool {
        guard transfer.phase == .running else { return false }
        guard let head = transfer.headReader.read(line) else { return true }
        guard decide(transfer, head) else { return false }
        splitIfWorthIt(transfer, head)
        return true
    }

    /// Judges the final response before any body byte is written. False aborts the transfer.
    private func decide(_ transfer: Transfer, _ head: ResponseHead) -> Bool {
        let decision = ResumeDecision.decide(
            requestedOffset: transfer.requestOffset, knownTotal: transfer.requestOffset > 0 ? transfer.bytesExpected : nil,
            status: head.status, contentRange: head.contentRange, contentLength: head.contentLength,
            maxFileSize: configuration.maxFileSize)
        transfer.decision = decision
        switch decision {
        case .append(_, let total), .replace(let total, _):
            // Before the first body byte and before a split preallocates: a file that cannot fit takes no space.
            if let refusal = claimSpace(transfer, size: total) {
                transfer.abortCause = .quotaExceeded(refusal)
                return false
            }
        default:
            break
        }
        switch decision {
        case .append(_, let total):
            accepted(transfer, head, total: total)
        case .replace(let total, let reason):
            transfer.writeOffset = 0
            transfer.writer.truncate { _ in }
            announceRestart(transfer, reason: reason)
            accepted(transfer, head, total: total)
        case .complete:
            accepted(transfer, head, total: transfer.requestOffset)
        case .restart(let reason):
            transfer.restartReason = reason
            return false
        case .httpError:
            transfer.retryAfter = head.retryAfter(now: Date())
        case .tooLarge(let total, let limit):
            transfer.abortCause = .tooLarge("the file has \(total) bytes, more than the limit of \(limit)")
            return false
        }
        return true
    }

    /// Claims room for the whole file under the spool's quota (`SpoolAllowance`); the refusal, or nil when it fits.
    func claimSpace(_ transfer: Transfer, size: Int64?) -> String? {
        guard let allowance else { return nil }
        switch allowance.claim(jobID: transfer.id, size: size) {
        case .granted(let limit):
            transfer.spoolLimit = limit
            return nil
        case .refused(let reason):
            return reason
        }
    }

    private func accepted(_ transfer: Transfer, _ head: ResponseHead, total: Int64?) {
        transfer.hasAcceptedResponse = true
        if head.status != 416 {
            transfer.etag = head.etag
            transfer.lastModified = head.lastModified
            transfer.contentType = head.contentType ?? transfer.contentType
        }
        announce(transfer, head, total: total, effectiveURL: transfer.easy?.effectiveURL, offset: transfer.writeOffset)
    }

    /// A transfer starts over from zero and its bytes on disk are discarded (the origin ignored the range, the file
    /// changed, nothing can validate a resume): logged, and told to the service, which says so in the job's event.
    func announceRestart(_ transfer: Transfer, reason: String) {
        logger.notice("download restarts from zero", metadata: ["id": "\(transfer.id)", "reason": "\(reason)"])
        emit(.restarted(id: transfer.id, reason: reason))
    }

    /// Records the final URL and the file's name and size, and emits `.responded`.
    func announce(_ transfer: Transfer, _ head: ResponseHead, total: Int64?, effectiveURL: String?, offset: Int64) {
        transfer.bytesExpected = total
        let finalURL = effectiveURL ?? transfer.url.normalized
        transfer.finalURL = finalURL
        if transfer.filename == nil {
            let name = Filename.resolve(requested: nil, contentDisposition: head.contentDisposition, finalURL: finalURL)
            transfer.filename = spool.reserve(filename: name, for: transfer.id)
        }
        emit(.responded(id: transfer.id, TransferMetadata(
            finalURL: finalURL, filename: transfer.filename ?? "download", contentType: transfer.contentType,
            bytesExpected: total, etag: transfer.etag, lastModified: transfer.lastModified, offset: offset)))
    }

    private func body(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer) -> CurlEasy.BodyDisposition {
        guard transfer.phase == .running else { return .abort }
        if transfer.decision == nil {
            // A response without a header block end (HTTP/0.9-like): judge what we have.
            guard let head = transfer.head, decide(transfer, head) else { return .abort }
        }
        switch transfer.decision {
        case .append, .replace: break
        case .complete, .httpError: return .consumed  // discarded
        default: return .abort
        }
        if transfer.writeFailure != nil { return .abort }
        if let max = configuration.maxFileSize, transfer.writeOffset + Int64(bytes.count) > max {
            transfer.abortCause = .tooLarge("the file is larger than the limit of \(max) bytes")
            return .abort
        }
        if let room = transfer.spoolLimit, transfer.writeOffset + Int64(bytes.count) > room {
            transfer.abortCause = .quotaExceeded("the file grew past \(room) bytes, the room left under the spool's quota")
            return .abort
        }
        if transfer.pendingWriteBytes >= configuration.writeBufferLimit {
            transfer.pausedForBackpressure = true
            return .pause
        }
        guard mayReceive(bytes.count, for: transfer, on: transfer) else { return .pause }
        let count = bytes.count
        let at = transfer.writeOffset
        transfer.writeOffset += Int64(count)
        transfer.pendingWriteBytes += count
        stage(bytes, at: at, in: transfer.writer) { error in self.written(transfer, count: count, error: error) }
        return .consumed
    }

    /// A chunk reached the disk (or failed): release back-pressure, or stop on a write failure.
    private func written(_ transfer: Transfer, count: Int, error: SystemError?) {
        dispatchPrecondition(condition: .onQueue(queue))
        transfer.pendingWriteBytes -= count
        guard transfer.phase == .running, let easy = transfer.easy else { return }
        if let error {
            guard transfer.writeFailure == nil else { return }
            transfer.writeFailure = error
            multi.remove(easy)
            attemptEnded(transfer, CURLE_WRITE_ERROR)
            return
        }
        if transfer.pausedForBackpressure, transfer.pendingWriteBytes <= configuration.writeBufferLimit / 2 {
            transfer.pausedForBackpressure = false
            multi.unpause(easy)
        }
    }

    // MARK: the end of an attempt

    /// libcurl finished the request (the handle is already out of the multi).
    func attemptEnded(_ transfer: Transfer, _ code: CURLcode) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let easy = transfer.easy else { return }
        let detail = easy.errorDetail
        transfer.easy = nil
        easy.cleanup()
        var restart = transfer.restartReason
        if restart == nil, code == CURLE_RANGE_ERROR { restart = "the origin did not honour the range request" }
        if let reason = restart {
            transfer.restartsInARow += 1
            if transfer.restartsInARow <= 2 {
                announceRestart(transfer, reason: reason)
                transfer.discardOnNextStart = true
                start(transfer)
                return
            }
            attemptFailed(transfer, .unusableResponse(reason))
            return
        }
        let cause: FailureCause?
        if let abort = transfer.abortCause {
            cause = abort
        } else if let error = transfer.writeFailure {
            cause = .write(error)
        } else if let refusal = transfer.refusal {
            cause = .forbiddenDestination(refusal)
        } else if case .httpError(let status) = transfer.decision {
            cause = .httpStatus(status, retryAfter: transfer.retryAfter)
        } else if code != CURLE_OK {
            cause = .curl(code: Int32(code.rawValue), detail: detail)
        } else if transfer.decision == nil {
            cause = .internalError("the origin's answer ended before its headers")
        } else {
            cause = nil
        }
        if let cause {
            attemptFailed(transfer, cause)
        } else {
            transfer.restartsInARow = 0
            finish(transfer)
        }
    }

    /// The body is complete: make it durable, verify it, move it into `files/`.
    ///
    /// The move is a group commit: each file is fsynced on its own writer queue (side by side), then the files
    /// that reach this point close together are moved into `files/` as one group, sharing one fsync of each
    /// directory and one file of finish records (`Spool.moveToFiles(_:)` on `diskQueue`, `finishGroups`),
    /// before any of them is reported finished.
    func finish(_ transfer: Transfer) {
        // The slot stays taken until the final event: a job is "downloading" until it is finished.
        transfer.phase = .finishing
        transfer.writer.finish { result in
            switch result {
            case .failure(let error):
                transfer.phase = .running
                self.attemptFailed(transfer, .write(error))
            case .success(let (size, sha256)):
                if let expected = transfer.spec.expectedSHA256?.lowercased(), expected != sha256 {
                    // The job's final numbers: what was received, though the file is discarded.
                    self.emit(.progress(id: transfer.id, TransferProgress(
                        bytesReceived: size, bytesExpected: transfer.bytesExpected, bytesPerSecond: 0, eta: nil)))
                    transfer.discardOnGiveUp = true
                    self.giveUp(transfer, FailureClassifier.classify(.checksumMismatch(expected: expected, actual: sha256)))
                    return
                }
                let finalURL = transfer.finalURL ?? transfer.url.normalized
                let name = transfer.filename ?? Filename.resolve(requested: nil, contentDisposition: nil, finalURL: finalURL)
                let pending = PendingFinish(transfer: transfer, finish: Spool.Finish(jobID: transfer.id, filename: name, size: size, sha256: sha256))
                if let group = self.finishGroups.add(pending) { self.moveToFiles(group) }
            }
        }
    }

    /// A synced file waiting for its group's move into `files/`.
    struct PendingFinish {
        let transfer: Transfer
        let finish: Spool.Finish
    }

    /// Moves a group of synced files into `files/` (on `diskQueue`), reports each, then moves the group that
    /// gathered meanwhile.
    private func moveToFiles(_ group: [PendingFinish]) {
        dispatchPrecondition(condition: .onQueue(queue))
        let spool = self.spool
        let finishes = group.map(\.finish)
        diskQueue.async {
            let results = spool.moveToFiles(finishes)
            self.queue.async {
                for pending in group {
                    let result = results[pending.finish.jobID] ?? .failure(SystemError("link", spool.partialPath(for: pending.finish.jobID), errno: EINVAL))
                    self.moved(pending, result)
                }
                if let next = self.finishGroups.groupEnded() { self.moveToFiles(next) }
            }
        }
    }

    /// One file of a moved group: finished (or removed again when the job was cancelled meanwhile).
    private func moved(_ pending: PendingFinish, _ result: Result<String, SystemError>) {
        let transfer = pending.transfer, id = transfer.id, spool = self.spool, finish = pending.finish
        switch result {
        case .failure(let error):
            diskQueue.async { spool.removeFinishRecord(jobID: id) }  // the job is not finished: nothing to adopt
            giveUp(transfer, JobFailure(code: .internalError, message: "moving the finished file failed: \(error)"))
        case .success(let filename):
            if transfer.stopIntent == .cancel {
                spool.release(jobID: id)
                diskQueue.async {
                    spool.removeFinished(filename: filename)
                    spool.removeFinishRecord(jobID: id)
                }
            } else {
                emit(.finished(id: id, FinishedFile(
                    filename: filename, path: spool.finishedPath(for: filename), size: finish.size, sha256: finish.sha256,
                    contentType: transfer.contentType, finalURL: transfer.finalURL ?? transfer.url.normalized,
                    etag: transfer.etag, lastModified: transfer.lastModified)))
            }
            forget(transfer)
        }
    }

    /// A failed attempt: close the writer (keeping the bytes), then retry, wait for space, or give up.
    func attemptFailed(_ transfer: Transfer, _ cause: FailureCause) {
        // A file over the quota gives its bytes back: kept, they would hold the spool full for nothing.
        if case .quotaExceeded = cause { transfer.discardOnGiveUp = true }
        attemptFailed(transfer, verdict: FailureClassifier.classify(cause))
    }

    /// Ends the attempt (every segment of a segmented one) and acts on `verdict` once the writer is closed.
    func attemptFailed(_ transfer: Transfer, verdict: FailureVerdict) {
        dispatchPrecondition(condition: .onQueue(queue))
        disconnectSegments(transfer)
        transfer.phase = .stopping
        closeWriter(transfer) { bytes in
            if self.shuttingDown, transfer.stopIntent == nil { transfer.stopIntent = .shutdown }
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

    private func giveUp(_ transfer: Transfer, _ verdict: FailureVerdict) {
        switch verdict {
        case .giveUp(let failure), .retry(let failure, _), .waitForSpace(let failure): giveUp(transfer, failure)
        }
    }

    private func giveUp(_ transfer: Transfer, _ failure: JobFailure) {
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
}
