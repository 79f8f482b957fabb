import CCurl
import Dispatch
import FerryCore
import Foundation

/// The fetches of a run: one path for every exchange, whether it asks for the rest of the file or for a
/// segment, over HTTP, FTP or SFTP (`SourceProtocol`; FTP and SFTP ask for the rest of the file from an offset,
/// with one connection). Everything here runs on `queue`; what a response means is decided by each fetch's `Exchange` (pure),
/// and this file carries its verdicts out with libcurl and the writer.
///
/// How a download becomes split, and its connections ramp up: `RunSplitter` (what is worth it: `SplitPlanner`).
///
/// Rules:
/// - Every segment response must be a 206 whose `Content-Range` is exactly the range asked for and whose
///   validators equal the known ones; otherwise the file changed and the download starts over from zero (a 200
///   with unchanged validators means the origin ignores ranges: start over with one connection).
/// - A fetch whose segment is received is released; a connection is then given, in order: a fetch waiting for
///   one, an unassigned segment, or half of the slowest segment's remainder (`WorkStealing`).
/// - A retryable failure of a split download retries that segment alone after the `RetryPolicy` back-off (its
///   own attempt count); any other failure, and any failure of a download that is not split, ends the run
///   (`attemptFailed`), which retries as a job, waits for space or gives up.
/// - Connections count against `maxPerHost`; a transfer always keeps one (its scheduling slot), and takes more
///   only while its host has room and no waiting transfer for that host could start instead.
/// - Segment requests use HTTP/1.1, so each is a TCP connection of its own (`FetchHandleOptions`).
/// - The table is saved (`FileWriter.saveSegments`) at most every `segmentStateInterval` while running
///   (`SegmentSaves`), and exactly when the transfer stops; it only counts writes the writer confirmed.
extension DownloadEngine {
    // MARK: assigning work to connections

    /// Splits runs over more connections (`RunSplitter`).
    var splitter: RunSplitter {
        RunSplitter(configuration: configuration, logger: logger, freeBytes: { self.freeBytes(needing: $0) },
                    sidecarFailed: { [unowned self] in writeFailed($0, $1, $2) })
    }

    /// Connects fetches while the run wants more connections and its host has room: first a fetch waiting for a
    /// connection (its back-off is over), then an unassigned segment, then half of the slowest segment.
    func fillConnections(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = Self.monotonicSeconds()
        while transfer.phase == .running, let run = transfer.segmented, run.connectedCount < run.target {
            if run.connectedCount > 0 {
                guard connectionsInUse(host: transfer.host) < configuration.maxPerHost, !hostIsContended(transfer.host) else { return }
            }
            let alignment = segmentAlignment(transfer)
            guard let next = run.nextFetch(now: now, minimumPiece: configuration.minimumSegmentSize, alignment: alignment) else { return }
            if let split = next.split {
                logger.debug("segment split", metadata: ["id": "\(transfer.id)", "victim": "\(split.victim)", "at": "\(split.at)"])
            }
            launch(transfer, run, next.fetch)
        }
    }

    /// Sends the request for the rest of a fetch's segment: a segment request once the file is split, else the
    /// rest of the file.
    private func launch(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch) {
        guard let segment = run.table.segment(startingAt: fetch.segmentStart), fetch.position < segment.end else {
            fetch.finishedReceiving = true
            run.release(fetch)
            return
        }
        fetch.retryAt = nil
        fetch.source = chooseSource(transfer, run, for: fetch)
        guard readyThroughProxy(transfer, fetch, url: requestURL(transfer, run, fetch)) else { return }
        let known = Exchange.Known(
            total: run.table.knownTotal ?? transfer.bytesExpected, etag: transfer.etag, lastModified: transfer.lastModified,
            maxFileSize: configuration.maxFileSize)
        let dialect = transfer.source.dialect, url = requestURL(transfer, run, fetch)
        let request = FetchRequest(dialect: dialect, position: fetch.position, segmentEnd: segment.end,
                                   splitValidator: run.validator, resumeValidator: transfer.ifRangeValidator,
                                   headerLines: RequestHeaderFilter.lines(transfer.spec.headers))
        // FTP from byte 0: Ferry asks SIZE itself and libcurl reads to the data connection's end, so a size that
        // understates the file is seen (libcurl 7.88 skips REST too under this option, hence only from 0).
        let sizeCommand = fetch.position == 0 ? transfer.source.sizeCommand(url: url) : nil
        fetch.begin(Exchange(request.request, known: known, dialect: dialect, quotedSize: sizeCommand != nil), at: Self.monotonicSeconds())
        let easy: CurlEasy
        do {
            easy = try FetchHandleOptions(configuration: configuration).handle(
                request, source: transfer.source, url: url, pins: Array(transfer.pins.values),
                receiveBuffer: receiveBufferSize(for: transfer), split: run.isSplit, sizeCommand: sizeCommand)
        } catch {
            _ = fetch.endExchange()
            attemptFailed(transfer, .internalError("\(error)"))
            return
        }
        easy.onHostKey = { [unowned self] match in hostKey(match, transfer, fetch) }
        easy.onHeaderLine = { [unowned self] line in headerLine(transfer, fetch, line) }
        easy.onBody = { [unowned self] bytes in body(transfer, fetch, bytes) }
        if configuration.proxy != nil {
            easy.onConnect = { _ in true }  // only ever the proxy: the guard ran on the pins
        } else {
            easy.onConnect = { [unowned self] bytes in admits(bytes) { fetch.exchange?.refuse($0) } }
        }
        fetch.easy = easy
        do {
            try multi.add(easy) { [unowned self] code in exchangeEnded(transfer, fetch, code) }
        } catch {
            fetch.easy = nil
            _ = fetch.endExchange()
            easy.cleanup()
            attemptFailed(transfer, .internalError("\(error)"))
            return
        }
        applyRateLimits()
    }

    // MARK: libcurl callbacks (inside a libcurl call: never add or remove a handle here)

    /// An SFTP server's host key: accepted only when the known-hosts file has it (`HostKeyCheck`).
    private func hostKey(_ match: CurlEasy.HostKeyMatch, _ transfer: Transfer, _ fetch: SegmentFetch) -> Bool {
        let place = "\(transfer.url.host.serialized):\(transfer.url.effectivePort)"
        guard let failure = HostKeyCheck.failure(match, place: place, knownHosts: configuration.sshKnownHosts) else { return true }
        fetch.exchange?.abort(failure)
        return false
    }

    private func headerLine(_ transfer: Transfer, _ fetch: SegmentFetch, _ line: String) -> Bool {
        guard let run = transfer.run(of: fetch), fetch.exchange != nil else { return false }
        if configuration.proxy != nil, !watchHop(transfer, fetch, line) { return false }
        guard let verdict = fetch.exchange?.read(headerLine: line, now: Date()) else { return true }
        return carryOut(verdict, transfer, run, fetch)
    }

    /// Acts on the verdict on a final response head, before any body byte: claims the file's room, records
    /// what the origin said, and splits the file when that is worth it. False stops the exchange.
    private func carryOut(_ verdict: HeadVerdict, _ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch) -> Bool {
        guard let exchange = fetch.exchange else { return false }
        let head = exchange.head
        switch verdict {
        case .accept(let offset, let total, let discarding):
            // Before the first body byte and before a split preallocates: a file that cannot fit takes no space.
            if let refusal = claimSpace(transfer, size: total) {
                fetch.exchange?.abort(.quotaExceeded(refusal))
                return false
            }
            var run = run
            if let reason = discarding {
                transfer.writer.truncate { _ in }
                announceRestart(transfer, reason: reason)
                run = run.restartedFromZero(with: fetch)
                transfer.segmented = run
            }
            if let total, run.table.knownTotal == nil { run.table.close(total: total) }
            let first = !run.responded
            accepted(transfer, run, fetch, head, total: total ?? run.table.knownTotal, offset: run.isSplit ? run.startBytes : offset)
            if first, case .rest = exchange.request, let head { splitIfWorthIt(transfer, run, fetch, head) }
        case .complete(let total):
            run.table.close(total: total)
            transfer.hasAcceptedResponse = true
            if !run.responded {
                run.responded = true
                announce(transfer, head, total: total, effectiveURL: fetch.easy?.effectiveURL, offset: total)
            }
        case .httpError, .restart, .tooLarge:
            break
        }
        return verdict.continues
    }

    /// The response continues the file: records the origin's validators and type (from the answer to the rest
    /// of the file; a segment's equal them) and announces the file once per run.
    private func accepted(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, _ head: ResponseHead?, total: Int64?, offset: Int64) {
        transfer.hasAcceptedResponse = true
        if case .rest = fetch.exchange?.request {
            transfer.etag = head?.etag
            transfer.lastModified = head?.lastModified ?? fetch.exchange?.report?.modified
            transfer.referenceSource = fetch.source
        }
        transfer.contentType = head?.contentType ?? transfer.contentType
        guard !run.responded else { return }
        run.responded = true
        announce(transfer, head, total: total, effectiveURL: fetch.easy?.effectiveURL, offset: offset)
    }

    /// Splits the file when the accepted answer to the rest of it allows that; its exchange keeps the first range.
    /// Called inside the header callback: the other fetches connect on the next turn of the queue.
    private func splitIfWorthIt(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, _ head: ResponseHead) {
        guard splitter.answered(transfer, run, fetch, head, hostRoom: configuration.maxPerHost - connectionsInUse(host: transfer.host),
                                alignment: segmentAlignment(transfer), now: Self.monotonicSeconds()) else { return }
        queue.async {
            self.fillConnections(transfer)
            self.applyRateLimits()
        }
    }

    /// Where segment boundaries fall (`SplitPlanner.alignment`).
    private func segmentAlignment(_ transfer: Transfer) -> Int64 {
        SplitPlanner.alignment(partsStored: objectStore != nil && uploadLedger != nil, size: transfer.bytesExpected,
                               uploadPartSize: transfer.parts.record?.partSize, preferredPartSize: configuration.objectPartSize)
    }

    /// One tick of a run's connection ramp (`RunSplitter.tick`); a raise connects more fetches.
    func adapt(_ transfer: Transfer, _ run: SegmentedDownload, now: Double) {
        guard splitter.tick(transfer, run, alignment: segmentAlignment(transfer), now: now) else { return }
        fillConnections(transfer)
        applyRateLimits()
    }

    /// Hands a chunk to the writer at the fetch's position, never past its segment's end (which moves when a
    /// connection takes over the tail); reaching the end before the response's end cuts the exchange there.
    private func body(_ transfer: Transfer, _ fetch: SegmentFetch, _ bytes: UnsafeRawBufferPointer) -> CurlEasy.BodyDisposition {
        guard var run = transfer.run(of: fetch), run.writeFailure == nil, fetch.exchange != nil else { return .abort }
        if fetch.exchange?.verdict == nil {
            // FTP and SFTP: judge what the server reported. HTTP: a response without a header block end
            // (HTTP/0.9-like): judge what we have.
            guard let verdict = fetch.exchange?.judgeBeforeBody(report: Exchange.ServerReport(fetch.easy), now: Date()),
                  carryOut(verdict, transfer, run, fetch),
                  let current = transfer.run(of: fetch) else { return .abort }
            run = current
        }
        guard let exchange = fetch.exchange else { return .abort }
        let segmentEnd = run.table.segment(startingAt: fetch.segmentStart)?.end ?? exchange.position
        let step = exchange.step(forBody: bytes.count, segmentEnd: segmentEnd, ceiling: .lowest(maxFileSize: configuration.maxFileSize, spoolRoom: transfer.spoolLimit))
        guard case .write(let at, let count, let last) = step else {
            fetch.exchange?.take(step)
            switch step {
            case .discard, .excess: return .consumed
            case .write, .cut, .fail: return .abort
            }
        }
        if run.pendingWriteBytes >= configuration.writeBufferLimit || transfer.parts.backlogged || lifecycle.holdingForStop {
            fetch.pausedForBackpressure = true
            return .pause
        }
        guard mayReceive(count, for: transfer, on: fetch) else { return .pause }
        fetch.exchange?.take(step)
        run.bytesReceived += Int64(count)
        if !transfer.sources.isEmpty { transfer.sources[fetch.source].bytesReceived += Int64(count) }
        run.pendingWriteBytes += count
        stage(UnsafeRawBufferPointer(rebasing: bytes[..<count]), at: at, in: transfer.writer) { [run] error in
            self.written(transfer, run, fetch, at: at, count: count, error: error)
        }
        return last ? .abort : .consumed
    }

    // MARK: completions

    /// The writer wrote a chunk (or failed): record it, release back-pressure, finish when all is written.
    private func written(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, at: Int64, count: Int, error: SystemError?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard transfer.segmented === run else { return }
        run.pendingWriteBytes -= count
        if let error {
            writeFailed(transfer, run, error)
            return
        }
        // Still recorded while stopping: the final save must count every confirmed write.
        run.table.recordWritten(start: fetch.segmentStart, upTo: at + Int64(count))
        guard transfer.phase == .running else { return }
        pumpParts(transfer)
        run.release(fetch)
        resumePausedFetches(transfer, run)
        finishIfDone(transfer)
    }

    /// Unpauses the connections paused for back-pressure once neither holds them: the writer's backlog is down to half
    /// its limit and no stored part waits for an upload slot (`LiveParts.backlogged`). Never inside a libcurl call.
    func resumePausedFetches(_ transfer: Transfer, _ run: SegmentedDownload) {
        guard run.pendingWriteBytes <= configuration.writeBufferLimit / 2, !transfer.parts.backlogged, !lifecycle.holdingForStop else { return }
        for paused in run.fetches.values where paused.pausedForBackpressure {
            guard transfer.segmented === run, transfer.phase == .running else { break }
            paused.pausedForBackpressure = false
            if let easy = paused.easy { multi.unpause(easy) }
        }
    }

    private func writeFailed(_ transfer: Transfer, _ run: SegmentedDownload, _ error: SystemError) {
        guard transfer.segmented === run, run.writeFailure == nil else { return }
        run.writeFailure = error
        if transfer.phase == .running { attemptFailed(transfer, .write(error)) }
    }

    /// libcurl finished an exchange (the handle is already out of the multi).
    private func exchangeEnded(_ transfer: Transfer, _ fetch: SegmentFetch, _ code: CURLcode) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let easy = fetch.easy else { return }
        var code = code, detail = easy.errorDetail
        if let proxy = configuration.proxy { (code, detail) = CurlEasy.throughProxy(proxy, code: code, detail: detail) }
        let report = Exchange.ServerReport(easy)
        fetch.easy = nil
        easy.cleanup()
        // FTP or SFTP without a body byte: the file was complete already, or is empty.
        if let run = transfer.run(of: fetch), let verdict = fetch.exchange?.judgeAtEnd(code: Int32(code.rawValue), report: report) {
            _ = carryOut(verdict, transfer, run, fetch)
        }
        guard let exchange = fetch.endExchange(), let run = transfer.run(of: fetch) else { return }
        if let target = fetch.redirectToPin {
            fetch.redirectToPin = nil
            followThroughProxy(transfer, run, to: target)
            return
        }
        let segmentEnd = run.table.segment(startingAt: fetch.segmentStart)?.end
        switch exchange.ended(code: Int32(code.rawValue), detail: detail, segmentEnd: segmentEnd) {
        case .received:
            // A file of unknown size ends where its body ended.
            if run.table.knownTotal == nil { run.table.close(total: exchange.position) }
            fetch.finishedReceiving = true
            fetch.failures = 0
            run.release(fetch)
            fillConnections(transfer)
            applyRateLimits()
            pump()  // a released connection may let a waiting transfer to the same host start
            finishIfDone(transfer)
        case .restart(let reason, let singleConnection):
            // A mirror that disagrees with the source that defined the file is dropped, never mixed in.
            if run.isSplit, fetch.source != transfer.referenceSource,
               dropSource(transfer, run, after: fetch, JobFailure(code: .sourceMismatch, message: reason, httpStatus: nil)) { return }
            restart(transfer, reason: reason, singleConnection: singleConnection)
        case .failed(let cause):
            if let failure = Self.sourceFailure(cause), dropSource(transfer, run, after: fetch, failure) { return }
            fetchFailed(transfer, run, fetch, cause)
        }
    }

    /// A failed exchange: a split download retries that segment alone; otherwise the run ends (`attemptFailed`).
    private func fetchFailed(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, _ cause: FailureCause) {
        guard run.isSplit, case .retry(let failure, let retryAfter) = FailureClassifier.classify(cause) else {
            attemptFailed(transfer, cause)
            return
        }
        fetch.failures += 1
        guard configuration.retry.shouldRetry(afterAttempt: fetch.failures) else {
            attemptFailed(transfer, verdict: .giveUp(failure))
            return
        }
        let delay = configuration.retry.delay(afterAttempt: fetch.failures, retryAfter: retryAfter, jitter: Double.random(in: 0...1))
        logger.info("segment retrying", metadata: [
            "id": "\(transfer.id)", "from": "\(fetch.position)", "attempt": "\(fetch.failures)", "code": "\(failure.code)",
            "message": "\(failure.message)", "delay": "\(String(format: "%.2f", delay))",
        ])
        fetch.retryAt = Self.monotonicSeconds() + delay
        queue.asyncAfter(deadline: .now() + delay) { [weak self, weak transfer] in
            guard let self, let transfer else { return }
            self.fillConnections(transfer)
        }
        fillConnections(transfer)
        applyRateLimits()
        pump()
    }

    // MARK: stopping and changing

    /// Removes every exchange of the run from the multi; pending back-offs lapse with the run.
    func disconnectFetches(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        transfer.segmented?.disconnectAll { easy in
            multi.remove(easy)
            easy.cleanup()
        }
    }

    /// Saves the table of a running split download when it changed and the interval passed.
    func saveSegmentsIfDue(_ transfer: Transfer, now: Double) {
        guard transfer.phase == .running, let run = transfer.segmented, let sidecar = run.sidecar,
              run.saves.begin(bytesWritten: sidecar.table.bytesWritten, now: now, interval: configuration.segmentStateInterval)
        else { return }
        transfer.writer.saveSegments(sidecar) { error in
            run.saves.ended(failed: error != nil)
            if let error {
                self.logger.warning("saving segment state failed", metadata: ["id": "\(transfer.id)", "error": "\(error)"])
            }
        }
    }

    // MARK: connections per host

    /// Connections the engine holds to `host`: one per active transfer, or each connected fetch.
    ///
    /// Only the scheduler's active transfers can hold any (a transfer opens, runs and finishes only while active:
    /// every way out of those phases gives up its slot), so this walks at most `maxConcurrent` of them, not the
    /// whole queue of a big batch: it runs for every transfer that starts.
    func connectionsInUse(host: String) -> Int {
        let key = host.lowercased()
        return scheduling.activeIDs.reduce(0) { sum, id in
            guard let transfer = transfers[id] else { return sum }
            let held = transfer.connectionsInUse
            return held > 0 && transfer.host.lowercased() == key ? sum + held : sum
        }
    }

    /// A waiting transfer to `host` could start if a connection to it were released (neither the global limit
    /// nor the scheduler's own count of transfers to the host holds it back).
    func hostIsContended(_ host: String) -> Bool {
        guard scheduling.activeCount < scheduling.maxActive, scheduling.activeCount(host: host) < configuration.maxPerHost else { return false }
        return scheduling.isWaiting(host: host)
    }
}
