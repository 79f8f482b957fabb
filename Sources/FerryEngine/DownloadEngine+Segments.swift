import CCurl
import Dispatch
import FerryCore
import Foundation

/// Segmented (multi-connection) downloads. Everything here runs on `queue`.
///
/// How a transfer becomes segmented: its first exchange is an ordinary request (from zero, or `Range: bytes=N-`
/// when resuming a contiguous partial file). When that response shows the origin serves ranges (a 206, or
/// `Accept-Ranges: bytes`), gives the length and a validator (strong ETag, else Last-Modified), and the file is
/// worth splitting (`wantedConnections`), the rest of the file is planned into near-equal segments: the running
/// exchange keeps the first one (it is cut at that segment's end) and new connections fetch the others with
/// `Range: bytes=a-b` and `If-Range`. No probe request is spent. A partial file with a segment sidecar is resumed
/// segmented directly: every request is then a segment request.
///
/// Rules:
/// - Every segment response must be a 206 whose `Content-Range` is exactly the range asked for and whose
///   validators equal the known ones (`SegmentResponse`); otherwise the file changed and the download starts
///   over from zero (a 200 with unchanged validators means the origin ignores ranges: start over with one
///   connection).
/// - A connection whose segment is received takes, in order: a segment waiting for a connection, an unassigned
///   segment, or half of the slowest segment's remainder (`WorkStealing`); else it is released.
/// - A retryable failure retries that segment alone after the `RetryPolicy` back-off (its own attempt count); a
///   fatal one, a write failure or an exhausted segment fails the transfer like a single-connection attempt.
/// - Connections count against `maxPerHost`; a transfer always keeps one (its scheduling slot), and takes more only
///   while its host has room and no waiting transfer for that host could start instead.
/// - Segment requests use HTTP/1.1, so each is a TCP connection of its own (HTTP/2 would multiplex them onto one,
///   defeating the point: origins and networks limit speed per connection).
/// - The table is saved (`FileWriter.saveSegments`) at most every `segmentStateInterval` while running, and
///   exactly when the transfer stops; it only counts writes the writer confirmed.
extension DownloadEngine {
    // MARK: deciding

    /// Connections wanted for a file of `total` bytes: the spec's (1-16), else the default for big files, else 1.
    func wantedConnections(_ transfer: Transfer, total: Int64) -> Int {
        if transfer.singleConnectionOnly { return 1 }
        if let asked = transfer.spec.connections { return min(max(asked, 1), 16) }
        return total >= configuration.segmentationThreshold ? max(1, configuration.defaultConnections) : 1
    }

    /// Splits the file when the single exchange's accepted response allows it; the exchange becomes the first
    /// segment's fetch. Called inside the header callback: nothing is added to or removed from the multi here.
    func splitIfWorthIt(_ transfer: Transfer, _ head: ResponseHead) {
        let offset: Int64
        let total: Int64?
        switch transfer.decision {
        case .append(let start, let size): (offset, total) = (start, size)
        case .replace(let size, _): (offset, total) = (0, size)
        default: return
        }
        guard let total, offset < total, let easy = transfer.easy, head.status == 206 || head.acceptsByteRanges,
              let validator = Transfer.ifRangeValidator(etag: head.etag, lastModified: head.lastModified) else { return }
        // Splitting preallocates the rest of the file at once: only when that still leaves the free-space
        // reserve. Otherwise one connection writes as bytes arrive and waits with `disk_full`, keeping them.
        if let free = spool.freeBytes(), free - (total - offset) < configuration.minFreeSpace { return }
        let wanted = wantedConnections(transfer, total: total)
        let room = 1 + max(0, configuration.maxPerHost - connectionsInUse(host: transfer.host))
        let count = min(room, SegmentTable.segmentCount(
            remaining: total - offset, connections: wanted, minimumSize: configuration.minimumSegmentSize))
        guard count > 1 else { return }

        let download = SegmentedDownload(
            table: .plan(total: total, from: offset, count: count), validator: validator, target: wanted,
            requestURL: easy.effectiveURL ?? transfer.url.normalized)
        download.responded = true
        let fetch = SegmentFetch(segmentStart: offset, position: offset)
        fetch.beginExchange(end: total, at: Self.monotonicSeconds())
        fetch.headReader = transfer.headReader
        fetch.accepted = true
        fetch.easy = easy
        fetch.appliedLowSpeedFloor = transfer.appliedLowSpeedFloor
        download.fetches[offset] = fetch
        transfer.segmented = download
        transfer.easy = nil
        easy.onHeaderLine = { _ in true }  // trailers, if any
        easy.onBody = { [unowned self] bytes in segmentBody(transfer, download, fetch, bytes) }
        easy.onConnect = { [unowned self] bytes in admits(bytes) { fetch.refusal = $0 } }
        multi.replaceCompletion(of: easy) { [unowned self] code in segmentExchangeEnded(transfer, download, fetch, code) }
        download.savedBytes = download.table.bytesWritten
        download.lastSave = Self.monotonicSeconds()
        transfer.writer.prepareSegments(download.sidecar) { error in
            guard let error else { return }
            self.segmentWriteFailed(transfer, download, error)
        }
        logger.debug("segmented", metadata: ["id": "\(transfer.id)", "segments": "\(count)", "total": "\(total)"])
        queue.async {
            self.fillConnections(transfer)
            self.applyRateLimits()
        }
    }

    /// Continues a segmented download from its sidecar (the partial file is open and its prefix hashed).
    func resumeSegments(_ transfer: Transfer, _ sidecar: SegmentSidecar) {
        dispatchPrecondition(condition: .onQueue(queue))
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
        let download = SegmentedDownload(
            table: table, validator: sidecar.validator, target: wantedConnections(transfer, total: table.total),
            requestURL: transfer.url.normalized)
        download.savedBytes = table.bytesWritten
        download.lastSave = Self.monotonicSeconds()
        transfer.resetAttempt(offset: 0)
        transfer.segmented = download
        transfer.phase = .running
        emit(.started(id: transfer.id, offset: table.bytesWritten))
        fillConnections(transfer)
        finishSegmentsIfDone(transfer)
        applyRateLimits()
    }

    // MARK: assigning work to connections

    /// Connects fetches while the transfer wants more connections and its host has room: first a fetch waiting
    /// for a connection (its back-off is over), then an unassigned segment, then half of the slowest segment.
    func fillConnections(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        while transfer.phase == .running, let download = transfer.segmented, download.connectedCount < download.target {
            if download.connectedCount > 0 {
                guard connectionsInUse(host: transfer.host) < configuration.maxPerHost, !hostIsContended(transfer.host) else { return }
            }
            if let waiting = download.fetches.values.filter({ !$0.isConnected && $0.retryWork == nil && !$0.finishedReceiving })
                .min(by: { $0.segmentStart < $1.segmentStart }) {
                launchFetch(transfer, download, waiting)
            } else if let segment = download.unassigned.first {
                let fetch = SegmentFetch(segmentStart: segment.start, position: segment.next)
                download.fetches[segment.start] = fetch
                launchFetch(transfer, download, fetch)
            } else if let steal = WorkStealing.steal(from: stealCandidates(download), minimumPiece: configuration.minimumSegmentSize),
                      let tail = download.table.split(start: steal.victim, at: steal.at) {
                logger.debug("segment split", metadata: ["id": "\(transfer.id)", "victim": "\(steal.victim)", "at": "\(steal.at)"])
                let fetch = SegmentFetch(segmentStart: tail.start, position: tail.start)
                download.fetches[tail.start] = fetch
                launchFetch(transfer, download, fetch)
            } else {
                return
            }
        }
    }

    private func stealCandidates(_ download: SegmentedDownload) -> [WorkStealing.Candidate] {
        download.fetches.values.filter { !$0.finishedReceiving }.compactMap { fetch in
            guard let segment = download.table.segment(startingAt: fetch.segmentStart) else { return nil }
            return WorkStealing.Candidate(
                start: fetch.segmentStart, position: fetch.position, end: segment.end,
                bytesPerSecond: fetch.measuredSpeed)
        }
    }

    /// Sends the request for the rest of a fetch's segment.
    private func launchFetch(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch) {
        guard let segment = download.table.segment(startingAt: fetch.segmentStart), fetch.position < segment.end else {
            fetch.finishedReceiving = true
            release(fetch, of: download)
            return
        }
        fetch.beginExchange(end: segment.end, at: Self.monotonicSeconds())
        let easy: CurlEasy
        do {
            easy = try CurlEasy()
        } catch {
            attemptFailed(transfer, .internalError("\(error)"))
            return
        }
        do {
            try configureRequest(easy, for: transfer, url: download.requestURL)
            try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
            var lines = RequestHeaderFilter.lines(transfer.spec.headers)
            lines.append("Range: bytes=\(fetch.requestStart)-\(fetch.requestEnd - 1)")
            lines.append("If-Range: \(download.validator)")
            try easy.setHeaders(lines)
            easy.onHeaderLine = { [unowned self] line in segmentHeaderLine(transfer, download, fetch, line) }
            easy.onBody = { [unowned self] bytes in segmentBody(transfer, download, fetch, bytes) }
            easy.onConnect = { [unowned self] bytes in admits(bytes) { fetch.refusal = $0 } }
            fetch.easy = easy
            try multi.add(easy) { [unowned self] code in segmentExchangeEnded(transfer, download, fetch, code) }
        } catch {
            fetch.easy = nil
            easy.cleanup()
            attemptFailed(transfer, .internalError("\(error)"))
            return
        }
        applyRateLimits()
    }

    // MARK: libcurl callbacks (inside a libcurl call: never add or remove a handle here)

    private func segmentHeaderLine(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch, _ line: String) -> Bool {
        guard transfer.segmented === download, transfer.phase == .running else { return false }
        guard let head = fetch.headReader.read(line) else { return true }
        return judge(transfer, download, fetch, head)
    }

    /// Judges a segment's final response before any body byte. False aborts the exchange.
    private func judge(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch, _ head: ResponseHead) -> Bool {
        let verdict = SegmentResponse.judge(
            requested: fetch.requestStart..<fetch.requestEnd, total: download.table.total, etag: transfer.etag,
            lastModified: transfer.lastModified, head: head)
        switch verdict {
        case .accept:
            fetch.accepted = true
            if !download.responded {
                download.responded = true
                transfer.hasAcceptedResponse = true
                transfer.contentType = head.contentType ?? transfer.contentType
                announce(transfer, head, total: download.table.total, effectiveURL: fetch.easy?.effectiveURL, offset: download.startBytes)
            }
            return true
        case .changed(let reason):
            fetch.restart = (reason, false)
            return false
        case .rangesIgnored(let reason):
            fetch.restart = (reason, true)
            return false
        case .httpError(let status):
            fetch.httpStatus = status
            fetch.retryAfter = head.retryAfter(now: Date())
            return true
        }
    }

    /// Hands a chunk to the writer at the fetch's position, never past its segment's end (which moves when a
    /// connection takes over the tail); reaching the end before the request's end cuts the exchange there.
    private func segmentBody(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch, _ bytes: UnsafeRawBufferPointer) -> CurlEasy.BodyDisposition {
        guard transfer.segmented === download, transfer.phase == .running, download.writeFailure == nil else { return .abort }
        guard fetch.accepted else { return fetch.httpStatus != nil ? .consumed : .abort }
        guard let segment = download.table.segment(startingAt: fetch.segmentStart) else { return .abort }
        let room = segment.end - fetch.position
        guard room > 0 else {
            fetch.reachedEnd = true
            return .abort
        }
        if download.pendingWriteBytes >= configuration.writeBufferLimit {
            fetch.pausedForBackpressure = true
            return .pause
        }
        let count = Int(min(Int64(bytes.count), room))
        guard mayReceive(count, for: transfer, on: fetch) else { return .pause }
        let at = fetch.position
        fetch.position += Int64(count)
        download.bytesReceived += Int64(count)
        download.pendingWriteBytes += count
        stage(UnsafeRawBufferPointer(rebasing: bytes[..<count]), at: at, in: transfer.writer) { error in
            self.segmentWritten(transfer, download, fetch, at: at, count: count, error: error)
        }
        if fetch.position == segment.end, segment.end < fetch.requestEnd || count < bytes.count {
            fetch.reachedEnd = true
            return .abort
        }
        return .consumed
    }

    // MARK: completions

    /// The writer wrote a chunk (or failed): record it, release back-pressure, finish when all is written.
    private func segmentWritten(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch, at: Int64, count: Int, error: SystemError?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard transfer.segmented === download else { return }
        download.pendingWriteBytes -= count
        if let error {
            segmentWriteFailed(transfer, download, error)
            return
        }
        // Still recorded while stopping: the final save must count every confirmed write.
        download.table.recordWritten(start: fetch.segmentStart, upTo: at + Int64(count))
        guard transfer.phase == .running else { return }
        release(fetch, of: download)
        if download.pendingWriteBytes <= configuration.writeBufferLimit / 2 {
            for paused in download.fetches.values where paused.pausedForBackpressure {
                guard transfer.segmented === download, transfer.phase == .running else { break }
                paused.pausedForBackpressure = false
                if let easy = paused.easy { multi.unpause(easy) }
            }
        }
        finishSegmentsIfDone(transfer)
    }

    private func segmentWriteFailed(_ transfer: Transfer, _ download: SegmentedDownload, _ error: SystemError) {
        guard transfer.segmented === download, download.writeFailure == nil else { return }
        download.writeFailure = error
        if transfer.phase == .running { attemptFailed(transfer, .write(error)) }
    }

    /// libcurl finished a segment exchange (the handle is already out of the multi).
    private func segmentExchangeEnded(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch, _ code: CURLcode) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let easy = fetch.easy else { return }
        let detail = easy.errorDetail
        fetch.easy = nil
        easy.cleanup()
        guard transfer.segmented === download, transfer.phase == .running else { return }
        let end = download.table.segment(startingAt: fetch.segmentStart)?.end ?? fetch.requestEnd
        if fetch.reachedEnd || (fetch.accepted && code == CURLE_OK && fetch.position >= end) {
            fetch.finishedReceiving = true
            fetch.failures = 0
            release(fetch, of: download)
            fillConnections(transfer)
            applyRateLimits()
            pump()  // a released connection may let a waiting transfer to the same host start
            finishSegmentsIfDone(transfer)
            return
        }
        if let restart = fetch.restart {
            restartSegments(transfer, reason: restart.reason, singleConnection: restart.singleConnection)
            return
        }
        let cause: FailureCause
        if let refusal = fetch.refusal {
            cause = .forbiddenDestination(refusal)
        } else if let status = fetch.httpStatus {
            cause = .httpStatus(status, retryAfter: fetch.retryAfter)
        } else if let error = download.writeFailure {
            cause = .write(error)
        } else if code != CURLE_OK {
            cause = .curl(code: Int32(code.rawValue), detail: detail)
        } else if !fetch.accepted {
            cause = .internalError("the origin's answer ended before its headers")
        } else {
            cause = .unusableResponse("the answer for bytes \(fetch.requestStart)-\(fetch.requestEnd - 1) ended at \(fetch.position)")
        }
        switch FailureClassifier.classify(cause) {
        case .retry(let failure, let retryAfter):
            fetch.failures += 1
            guard configuration.retry.shouldRetry(afterAttempt: fetch.failures) else {
                attemptFailed(transfer, verdict: .giveUp(failure))
                return
            }
            retrySegment(transfer, download, fetch, failure, retryAfter: retryAfter)
        case .waitForSpace, .giveUp:
            attemptFailed(transfer, cause)
        }
    }

    /// Waits out the back-off for one segment; the other connections keep going (and may take over half of it).
    private func retrySegment(_ transfer: Transfer, _ download: SegmentedDownload, _ fetch: SegmentFetch, _ failure: JobFailure, retryAfter: Double?) {
        let delay = configuration.retry.delay(afterAttempt: fetch.failures, retryAfter: retryAfter, jitter: Double.random(in: 0...1))
        logger.info("segment retrying", metadata: [
            "id": "\(transfer.id)", "from": "\(fetch.position)", "attempt": "\(fetch.failures)", "code": "\(failure.code)",
            "message": "\(failure.message)", "delay": "\(String(format: "%.2f", delay))",
        ])
        let work = DispatchWorkItem { [weak self, weak transfer, weak download, weak fetch] in
            guard let self, let transfer, let download, let fetch, transfer.segmented === download,
                  download.fetches[fetch.segmentStart] === fetch else { return }
            fetch.retryWork = nil
            self.fillConnections(transfer)
        }
        fetch.retryWork = work
        queue.asyncAfter(deadline: .now() + delay, execute: work)
        fillConnections(transfer)
        applyRateLimits()
        pump()
    }

    /// Forgets a fetch once its whole segment is received and written.
    private func release(_ fetch: SegmentFetch, of download: SegmentedDownload) {
        guard fetch.finishedReceiving, download.fetches[fetch.segmentStart] === fetch,
              download.table.segment(startingAt: fetch.segmentStart)?.isComplete == true else { return }
        download.fetches[fetch.segmentStart] = nil
    }

    // MARK: ending

    /// Every byte written and no exchange left: verify and move the file like a single-connection download.
    func finishSegmentsIfDone(_ transfer: Transfer) {
        guard transfer.phase == .running, let download = transfer.segmented, download.table.isComplete,
              download.pendingWriteBytes == 0, download.connectedCount == 0 else { return }
        for fetch in download.fetches.values { fetch.retryWork?.cancel() }
        download.fetches.removeAll()
        transfer.restartsInARow = 0
        finish(transfer)
    }

    /// The file changed (or the origin ignores ranges): drop every segment and start again from zero.
    func restartSegments(_ transfer: Transfer, reason: String, singleConnection: Bool) {
        disconnectSegments(transfer)
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

    /// Removes every segment exchange from the multi and cancels pending segment retries.
    func disconnectSegments(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let download = transfer.segmented else { return }
        for fetch in download.fetches.values {
            fetch.retryWork?.cancel()
            fetch.retryWork = nil
            fetch.pausedForBackpressure = false
            if let easy = fetch.easy {
                multi.remove(easy)
                easy.cleanup()
                fetch.easy = nil
            }
        }
    }

    /// Closes the transfer's writer; for a segmented download, then saves its exact table (every write
    /// completion has arrived before the close's, and the close synced the file). `done` gets the bytes on disk.
    func closeWriter(_ transfer: Transfer, _ done: @escaping @Sendable (Int64) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let download = transfer.segmented else {
            transfer.writer.close(completion: done)
            return
        }
        transfer.writer.close { _ in
            guard transfer.segmented === download else {
                done(download.table.bytesWritten)
                return
            }
            transfer.segmented = nil
            guard transfer.stopIntent != .cancel else {
                done(download.table.bytesWritten)
                return
            }
            transfer.writer.saveSegments(download.sidecar) { error in
                if let error { self.logger.warning("saving segment state failed", metadata: ["id": "\(transfer.id)", "error": "\(error)"]) }
                done(download.table.bytesWritten)
            }
        }
    }

    /// Saves the table of a running segmented download when it changed and the interval passed.
    func saveSegmentsIfDue(_ transfer: Transfer, now: Double) {
        guard transfer.phase == .running, let download = transfer.segmented, !download.saving,
              download.table.bytesWritten != download.savedBytes,
              now - download.lastSave >= configuration.segmentStateInterval else { return }
        download.saving = true
        download.lastSave = now
        let sidecar = download.sidecar
        download.savedBytes = sidecar.table.bytesWritten
        transfer.writer.saveSegments(sidecar) { error in
            download.saving = false
            if let error {
                download.savedBytes = -1
                self.logger.warning("saving segment state failed", metadata: ["id": "\(transfer.id)", "error": "\(error)"])
            }
        }
    }

    /// Points the running exchanges at a new URL: each continues its segment from where it is.
    func changeSegmentsURL(_ transfer: Transfer, _ url: String) {
        guard let download = transfer.segmented else { return }
        download.requestURL = url
        for fetch in download.fetches.values {
            if let easy = fetch.easy {
                multi.remove(easy)
                easy.cleanup()
                fetch.easy = nil
            }
            fetch.retryWork?.cancel()
            fetch.retryWork = nil
            fetch.failures = 0
        }
        fillConnections(transfer)
    }

    // MARK: connections per host

    /// Connections the engine holds to `host`: one per active transfer, or each connected segment.
    func connectionsInUse(host: String) -> Int {
        let key = host.lowercased()
        // Most transfers of a big batch are queued and hold nothing: skip them before spelling out their host
        // (an address's text is formatted on each call), since this runs for every transfer that starts.
        return transfers.values.reduce(0) { sum, transfer in
            let held = transfer.connectionsInUse
            return held > 0 && transfer.host.lowercased() == key ? sum + held : sum
        }
    }

    /// A waiting transfer to `host` could start if a connection to it were released (neither the global limit
    /// nor the scheduler's own count of transfers to the host holds it back).
    func hostIsContended(_ host: String) -> Bool {
        guard scheduling.activeCount < scheduling.maxActive, scheduling.activeCount(host: host) < configuration.maxPerHost else { return false }
        let key = host.lowercased()
        return scheduling.waitingIDs.contains { transfers[$0]?.host.lowercased() == key }
    }
}
