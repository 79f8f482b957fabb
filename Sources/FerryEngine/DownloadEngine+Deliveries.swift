import CCurl
import Dispatch
import FerryCore
import Foundation

/// Onward delivery: uploads a finished file to its target with libcurl on the engine's multi handle, as a `PUT`
/// of the raw file or a `multipart/form-data` `POST`. Everything here runs on `queue`.
///
/// Rules (API.md, "Onward delivery"): the destination guard applies to every address connected, and redirects
/// are not followed; a 2xx delivers; a failure is classified once (`FailureClassifier.classifyDelivery`): 408,
/// 429 (honouring `Retry-After`), 5xx and network errors are retried after the `RetryPolicy` back-off, each
/// attempt sending the file again from its first byte; anything else, or retries run out, fails with
/// `delivery_failed` (or `forbidden_destination`). The job's speed limit and the engine-wide one hold the upload
/// too: the read callback asks the same token buckets the downloads ask, and pauses the upload
/// (`CURL_READFUNC_PAUSE`) while they are empty. Deliveries do not take a download slot.
extension DownloadEngine {
    // MARK: public API (any thread)

    /// Starts uploading a finished file; a delivery already running for the id is left alone.
    public func deliver(_ spec: DeliverySpec) {
        queue.async {
            guard !self.lifecycle.shuttingDown, self.uploads[spec.id] == nil else { return }
            let upload = Upload(spec: spec)
            if let limit = spec.maxBytesPerSecond, limit > 0 {
                upload.rateBucket = TokenBucket(bytesPerSecond: limit, now: Self.monotonicSeconds())
            }
            self.uploads[spec.id] = upload
            self.send(upload)
        }
    }

    /// Stops a delivery (pause, cancel, delete): no further event. `stopped` runs on the event queue afterwards.
    public func stopDelivery(id: String, stopped: (@Sendable () -> Void)? = nil) {
        queue.async {
            if let upload = self.uploads[id] { self.end(upload) }
            if let stopped { self.eventQueue.async { stopped() } }
        }
    }

    // MARK: attempts

    /// Opens the file and adds the upload's exchange to the multi.
    private func send(_ upload: Upload) {
        dispatchPrecondition(condition: .onQueue(queue))
        upload.retryWork = nil
        // Through a proxy the target is resolved and checked first, and the proxy told to connect to that address.
        if configuration.proxy != nil, upload.pin == nil {
            DestinationResolver.pin(upload.spec.url, policy: configuration.destinations, queue: queue) { [weak self, weak upload] result in
                guard let self, let upload, self.uploads[upload.spec.id] === upload else { return }
                switch result {
                case .success(let pin):
                    upload.pin = pin
                    self.send(upload)
                case .failure(.forbidden(let detail)):
                    self.deliveryEnded(upload, cause: .forbiddenDestination(detail))
                case .failure(.unresolved(let detail)):
                    self.deliveryEnded(upload, cause: .curl(code: Int32(CURLE_COULDNT_RESOLVE_HOST.rawValue), detail: detail))
                }
            }
            return
        }
        upload.beginAttempt(at: Self.monotonicSeconds())
        let spec = upload.spec
        let fd = open(spec.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            deliveryEnded(upload, cause: .internalError("the finished file cannot be read: \(SystemError("open", spec.path))"))
            return
        }
        upload.fd = fd
        // Read in order from the first byte: the kernel's read-ahead grows, and `read` asks for more (`ReadAhead`).
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL)
        upload.readAhead = ReadAhead()
        let easy: CurlEasy
        do {
            easy = try CurlEasy()
        } catch {
            deliveryEnded(upload, cause: .internalError("\(error)"))
            return
        }
        do {
            try configureUpload(easy, upload)
            easy.onHeaderLine = { [unowned upload] line in
                _ = upload.headReader.read(line)
                return true
            }
            easy.onBody = { _ in .consumed }  // the target's answer body is not kept
            if configuration.proxy != nil {
                easy.onConnect = { _ in true }  // only ever the proxy: the guard ran on the pin
            } else {
                easy.onConnect = { [unowned self, unowned upload] bytes in admits(bytes) { upload.cause = .forbiddenDestination($0) } }
            }
            easy.onRead = { [unowned self, unowned upload] buffer in read(upload, into: buffer) }
            upload.easy = easy
            try multi.add(easy) { [unowned self, unowned upload] code in exchangeEnded(upload, code) }
        } catch {
            upload.easy = nil
            easy.cleanup()
            deliveryEnded(upload, cause: .internalError("\(error)"))
            return
        }
        emit(.delivering(id: upload.id, upload.progress))
        upload.lastReportTime = Self.monotonicSeconds()
    }

    private func configureUpload(_ easy: CurlEasy, _ upload: Upload) throws(CurlError) {
        let spec = upload.spec, c = configuration
        try easy.set(CURLOPT_URL, spec.url.normalized)
        try easy.set(CURLOPT_PROTOCOLS_STR, "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, 0)
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(c.connectTimeout * 1000))
        try easy.set(CURLOPT_LOW_SPEED_LIMIT, 1)
        try easy.set(CURLOPT_LOW_SPEED_TIME, c.lowSpeedTime)
        try easy.set(CURLOPT_USERAGENT, c.userAgent)
        try easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        // libcurl reads the file 64 KiB at a time by default, one turn of the engine's loop per read; as large a
        // buffer as downloads get (less under a speed limit, so the limit holds over short windows).
        try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, uploadBufferSize(for: spec))
        // As for downloads: never a proxy from the environment, which the destination guard could not see past;
        // `--proxy` with the pinned target.
        if let proxy = c.proxy, let pin = upload.pin {
            try easy.route(through: proxy, pins: [pin])
        } else {
            try easy.set(CURLOPT_PROXY, "")
        }
        var lines = RequestHeaderFilter.lines(spec.headers)
        switch spec.method {
        case .put:
            try easy.setUpload(size: spec.size)
            if !lines.contains(where: { $0.lowercased().hasPrefix("content-type:") }) {
                lines.append("Content-Type: \(spec.contentType ?? "application/octet-stream")")
            }
        case .post(let field, let fields):
            try easy.setMultipart(fields: fields, field: field, filename: spec.filename, contentType: spec.contentType, size: spec.size)
        }
        try easy.setHeaders(lines)
    }

    /// libcurl asks for the next part of the file (inside a libcurl call).
    private func read(_ upload: Upload, into buffer: UnsafeMutableRawBufferPointer) -> CurlEasy.ReadDisposition {
        guard uploads[upload.id] === upload, upload.fd >= 0 else { return .abort }
        // Right before each byte of the side effect: a node that lost its lease sends no more of the request.
        guard uploadLedger?.mayAct(jobID: upload.id) ?? true else {
            upload.fenced = true
            return .abort
        }
        let wanted = Int(min(Int64(buffer.count), upload.spec.size - upload.bytesSent))
        guard wanted > 0 else { return .filled(0) }
        if let delay = rateDelay(wanted, own: &upload.rateBucket) {
            scheduleWake(upload, after: delay)
            return .pause
        }
        if let range = upload.readAhead.advice(at: upload.bytesSent, size: upload.spec.size) {
            // Starts reading the next window into the page cache without waiting: this `pread` and the next ones
            // then copy from memory instead of holding the engine queue on the disk.
            _ = posix_fadvise(upload.fd, off_t(range.lowerBound), off_t(range.upperBound - range.lowerBound), POSIX_FADV_WILLNEED)
        }
        let n = pread(upload.fd, buffer.baseAddress, wanted, off_t(upload.bytesSent))
        guard n > 0 else {
            upload.cause = .internalError(n == 0 ? "the finished file is shorter than \(upload.spec.size) bytes"
                                                  : "reading the finished file failed: \(SystemError("pread", upload.spec.path))")
            return .abort
        }
        upload.bytesSent += Int64(n)
        return .filled(n)
    }

    private func scheduleWake(_ upload: Upload, after delay: Double) {
        guard !upload.waitingForRate else { return }
        upload.waitingForRate = true
        queue.asyncAfter(deadline: .now() + max(0.001, delay)) { [weak self, weak upload] in
            guard let self, let upload, upload.waitingForRate else { return }
            upload.waitingForRate = false
            guard self.uploads[upload.id] === upload, let easy = upload.easy else { return }
            self.multi.unpause(easy)
        }
    }

    /// libcurl finished the exchange (the handle is already out of the multi).
    private func exchangeEnded(_ upload: Upload, _ code: CURLcode) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let easy = upload.easy else { return }
        let status = easy.responseCode
        let detail = easy.errorDetail
        upload.easy = nil
        easy.cleanup()
        closeFile(upload)
        guard uploads[upload.id] === upload else { return }
        if upload.fenced {
            logger.notice("delivery stopped: this node may no longer act for the job", metadata: ["id": "\(upload.id)"])
            uploads[upload.id] = nil
            finishShutdownIfIdle()
            return
        }
        if let cause = upload.cause {
            deliveryEnded(upload, cause: cause)
        } else if code != CURLE_OK {
            deliveryEnded(upload, cause: .curl(code: Int32(code.rawValue), detail: detail))
        } else if (200..<300).contains(status) {
            logger.info("delivered", metadata: ["id": "\(upload.id)", "status": "\(status)", "bytes": "\(upload.bytesSent)"])
            emit(.delivering(id: upload.id, upload.progress))
            emit(.delivered(id: upload.id, status: status))
            uploads[upload.id] = nil
            finishShutdownIfIdle()
        } else {
            deliveryEnded(upload, cause: .httpStatus(status, retryAfter: upload.headReader.head?.retryAfter(now: Date())))
        }
    }

    /// How long a stopping engine waits for the answer to a delivery whose body is all sent (`beginShutdown`).
    static let answerGraceSeconds = 2.0

    /// Lets a delivery whose body is all sent end by itself (its answer recorded as usual) within
    /// `answerGraceSeconds` of the stop; ended then without an event if it has not.
    func awaitAnswerBeforeShutdown(_ upload: Upload) {
        dispatchPrecondition(condition: .onQueue(queue))
        queue.asyncAfter(deadline: .now() + Self.answerGraceSeconds) { [weak self, weak upload] in
            guard let self, let upload, self.uploads[upload.id] === upload else { return }
            self.end(upload)
            self.finishShutdownIfIdle()
        }
    }

    /// A failed attempt: retry after the back-off, or give up (while stopping: neither, the next start sends it).
    private func deliveryEnded(_ upload: Upload, cause: FailureCause) {
        closeFile(upload)
        if lifecycle.shuttingDown {
            end(upload)
            return
        }
        switch FailureClassifier.classifyDelivery(cause) {
        case .retry(let failure, let retryAfter):
            upload.failures += 1
            if configuration.retry.shouldRetry(afterAttempt: upload.failures) {
                let delay = configuration.retry.delay(afterAttempt: upload.failures, retryAfter: retryAfter, jitter: Double.random(in: 0...1))
                let work = DispatchWorkItem { [weak self, weak upload] in
                    guard let self, let upload, self.uploads[upload.id] === upload else { return }
                    self.send(upload)
                }
                upload.retryWork = work
                logger.info("delivery retrying", metadata: ["id": "\(upload.id)", "attempt": "\(upload.failures)", "message": "\(failure.message)"])
                emit(.deliveryWaiting(id: upload.id, at: Date(timeIntervalSinceNow: delay), attempt: upload.failures, failure: failure))
                queue.asyncAfter(deadline: .now() + delay, execute: work)
                return
            }
            giveUpDelivery(upload, failure)
        case .waitForSpace(let failure), .giveUp(let failure):
            giveUpDelivery(upload, failure)
        }
    }

    private func giveUpDelivery(_ upload: Upload, _ failure: JobFailure) {
        logger.info("delivery failed", metadata: ["id": "\(upload.id)", "code": "\(failure.code)", "message": "\(failure.message)"])
        emit(.deliveryFailed(id: upload.id, failure))
        uploads[upload.id] = nil
    }

    /// Removes a delivery without an event (stop, shutdown).
    func end(_ upload: Upload) {
        dispatchPrecondition(condition: .onQueue(queue))
        upload.retryWork?.cancel()
        upload.retryWork = nil
        if let easy = upload.easy {
            multi.remove(easy)
            easy.cleanup()
            upload.easy = nil
        }
        closeFile(upload)
        if uploads[upload.id] === upload { uploads[upload.id] = nil }
        finishShutdownIfIdle()
    }

    private func closeFile(_ upload: Upload) {
        if upload.fd >= 0 {
            close(upload.fd)
            upload.fd = -1
        }
    }

    /// Emits upload progress at most once per `progressInterval` (called by the ticker).
    func sampleUploads(now: Double) {
        for upload in uploads.values where upload.easy != nil {
            upload.meter.record(totalBytes: upload.bytesSent, at: now)
            guard now - upload.lastReportTime >= configuration.progressInterval * 0.95 else { continue }
            upload.lastReportTime = now
            emit(.delivering(id: upload.id, upload.progress))
        }
    }
}
