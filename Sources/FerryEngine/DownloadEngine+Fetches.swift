import CCurl
import Dispatch
import FerryCore
import Foundation

/// The fetches of a run: one path for every exchange, whether it asks for the rest of the file or for a
/// segment, over HTTP, FTP or SFTP (`SourceProtocol`; FTP and SFTP ask for the rest of the file from an offset,
/// with one connection). Everything here runs on `queue`; what a response means is decided by each fetch's `Exchange` (pure),
/// and this file carries its verdicts out with libcurl and the writer.
///
/// How a download becomes split: its first exchange asks for the rest of the file (from zero, or `Range: bytes=N-`
/// when resuming a contiguous partial file). When that response shows the origin serves ranges (a 206, or
/// `Accept-Ranges: bytes`), gives the length and a validator (strong ETag, else Last-Modified), and the file is
/// worth splitting (`wantedConnections`), its segment is divided into near-equal ranges: the running exchange
/// keeps the first one (it is cut at that range's end) and new fetches ask for the others with `Range: bytes=a-b`
/// and `If-Range`. No probe request is spent. A partial file with saved segment state resumes split at once.
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
/// - Segment requests use HTTP/1.1, so each is a TCP connection of its own (HTTP/2 would multiplex them onto one,
///   defeating the point: origins and networks limit speed per connection).
/// - The table is saved (`FileWriter.saveSegments`) at most every `segmentStateInterval` while running, and
///   exactly when the transfer stops; it only counts writes the writer confirmed.
extension DownloadEngine {
    // MARK: assigning work to connections

    /// Connections wanted for a file of `total` bytes: the spec's (1-16), else the default for big files, else 1.
    func wantedConnections(_ transfer: Transfer, total: Int64) -> Int {
        if transfer.singleConnectionOnly || !transfer.source.allowsSegments { return 1 }
        var wanted = total >= configuration.segmentationThreshold ? max(1, configuration.defaultConnections) : 1
        if let asked = transfer.spec.connections { wanted = min(max(asked, 1), 16) }
        // Mirrors: at least one connection per active source.
        let sources = transfer.sources.lazy.filter(\.isActive).count
        return sources > 1 ? min(16, max(wanted, sources)) : wanted
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
            if let waiting = run.fetches.values.filter({ $0.mayConnect(now: now) }).min(by: { $0.segmentStart < $1.segmentStart }) {
                launch(transfer, run, waiting)
            } else if let segment = run.unassigned.first {
                let fetch = SegmentFetch(segmentStart: segment.start, position: segment.next)
                run.fetches[segment.start] = fetch
                launch(transfer, run, fetch)
            } else if run.isSplit,
                      let steal = WorkStealing.steal(from: stealCandidates(run), minimumPiece: configuration.minimumSegmentSize),
                      let victim = run.table.segment(startingAt: steal.victim),
                      let tail = run.table.split(start: steal.victim, at: SegmentTable.align(
                        steal.at, to: segmentAlignment(transfer), inside: (run.fetches[steal.victim]?.position ?? victim.next)..<victim.end)) {
                logger.debug("segment split", metadata: ["id": "\(transfer.id)", "victim": "\(steal.victim)", "at": "\(steal.at)"])
                let fetch = SegmentFetch(segmentStart: tail.start, position: tail.start)
                run.fetches[tail.start] = fetch
                launch(transfer, run, fetch)
            } else {
                return
            }
        }
    }

    private func stealCandidates(_ run: SegmentedDownload) -> [WorkStealing.Candidate] {
        run.fetches.values.filter { !$0.finishedReceiving }.compactMap { fetch in
            guard let segment = run.table.segment(startingAt: fetch.segmentStart) else { return nil }
            return WorkStealing.Candidate(
                start: fetch.segmentStart, position: fetch.position, end: segment.end,
                bytesPerSecond: fetch.measuredSpeed)
        }
    }

    /// Sends the request for the rest of a fetch's segment: a segment request once the file is split, else the
    /// rest of the file.
    private func launch(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch) {
        guard let segment = run.table.segment(startingAt: fetch.segmentStart), fetch.position < segment.end else {
            fetch.finishedReceiving = true
            release(fetch, of: run)
            return
        }
        fetch.retryAt = nil
        fetch.source = chooseSource(transfer, run, for: fetch)
        guard readyThroughProxy(transfer, fetch, url: requestURL(transfer, run, fetch)) else { return }
        let known = Exchange.Known(
            total: run.table.knownTotal ?? transfer.bytesExpected, etag: transfer.etag, lastModified: transfer.lastModified,
            maxFileSize: configuration.maxFileSize)
        let request: Exchange.Request
        var lines = RequestHeaderFilter.lines(transfer.spec.headers)
        let dialect = transfer.source.dialect
        if dialect == .byteOffset {
            // FTP and SFTP: `CURLOPT_RESUME_FROM_LARGE` (below), judged by the size the server reports.
            request = .rest(from: fetch.position)
            lines = []
        } else if let validator = run.validator {
            request = .range(fetch.position..<segment.end)
            lines.append("Range: bytes=\(fetch.position)-\(segment.end - 1)")
            lines.append("If-Range: \(validator)")
        } else {
            request = .rest(from: fetch.position)
            if fetch.position > 0 {
                lines.append("Range: bytes=\(fetch.position)-")
                if let validator = transfer.ifRangeValidator { lines.append("If-Range: \(validator)") }
            }
        }
        // FTP from byte 0: Ferry asks SIZE itself and libcurl reads to the data connection's end, so a size that
        // understates the file is seen (libcurl 7.88 skips REST too under this option, hence only from 0).
        let sizeCommand = fetch.position == 0 ? transfer.source.sizeCommand(url: requestURL(transfer, run, fetch)) : nil
        fetch.begin(Exchange(request, known: known, dialect: dialect, quotedSize: sizeCommand != nil), at: Self.monotonicSeconds())
        let easy: CurlEasy
        do {
            easy = try CurlEasy()
        } catch {
            _ = fetch.endExchange()
            attemptFailed(transfer, .internalError("\(error)"))
            return
        }
        do {
            try configureRequest(easy, for: transfer, url: requestURL(transfer, run, fetch))
            // Each range its own TCP connection: HTTP/2 would multiplex them onto one.
            if run.isSplit { try easy.set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1)) }
            try easy.setHeaders(lines)
            if dialect == .byteOffset, fetch.position > 0 { try easy.set(CURLOPT_RESUME_FROM_LARGE, offset: fetch.position) }
            if let sizeCommand {
                try easy.set(CURLOPT_IGNORE_CONTENT_LENGTH, 1)
                try easy.setPrequote([sizeCommand])
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

    /// The options every request of a transfer shares (URL, protocols, redirects, timeouts, buffer, limits), and
    /// those of its source's protocol.
    private func configureRequest(_ easy: CurlEasy, for transfer: Transfer, url: String) throws(CurlError) {
        let c = configuration
        let source = transfer.source
        try easy.set(CURLOPT_URL, source.curlURL(url))
        // Limited per transfer: an http redirect never leads to ftp, sftp or file.
        try easy.set(CURLOPT_PROTOCOLS_STR, source.curlProtocols)
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try configureProtocol(easy, source)
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
        // address while the proxy fetched whatever name it was given. `--proxy` is used with pinned destinations.
        if let proxy = c.proxy {
            try easy.route(through: proxy, pins: Array(transfer.pins.values))
        } else {
            try easy.set(CURLOPT_PROXY, "")
        }
        if let max = c.maxFileSize { try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: max) }
    }

    /// The options of FTP and SFTP. Passive FTP connects its data connection to the control connection's address
    /// (`CURLOPT_FTP_SKIP_PASV_IP`: a PASV reply naming another address is ignored; EPSV names only a port), and the
    /// open-socket callback checks that connection too. SFTP logs in with the URL's password or the service
    /// user's key (`~/.ssh/id_rsa`, libcurl's default), after the host key is found in `sshKnownHosts`.
    private func configureProtocol(_ easy: CurlEasy, _ source: SourceProtocol) throws(CurlError) {
        switch source {
        case .http:
            return
        case .ftp, .ftps:
            try easy.set(CURLOPT_FTP_SKIP_PASV_IP, 1)
            try easy.set(CURLOPT_FILETIME, 1)
            if source == .ftps { try easy.set(CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)) }
        case .sftp:
            try easy.set(CURLOPT_FILETIME, 1)
            try easy.set(CURLOPT_SSH_AUTH_TYPES, ferry_ssh_auth_password_publickey())
            try easy.checkHostKeys(knownHosts: configuration.sshKnownHosts)
        }
    }

    // MARK: libcurl callbacks (inside a libcurl call: never add or remove a handle here)

    /// An SFTP server's host key: accepted only when the known-hosts file has it; otherwise the exchange fails
    /// with `host_key_unknown`.
    private func hostKey(_ match: CurlEasy.HostKeyMatch, _ transfer: Transfer, _ fetch: SegmentFetch) -> Bool {
        let file = configuration.sshKnownHosts
        let place = "\(transfer.url.host.serialized):\(transfer.url.effectivePort)"
        switch match {
        case .known:
            return true
        case .unknown:
            fetch.exchange?.abort(.hostKeyRejected("the SFTP server's host key for \(place) is not in \(file) (--ssh-known-hosts)"))
        case .changed:
            fetch.exchange?.abort(.hostKeyRejected(
                "the SFTP server's host key for \(place) differs from the one in \(file): it changed, or another server answers"))
        }
        return false
    }

    /// What an FTP or SFTP server said of the file, from libcurl.
    private func serverReport(_ easy: CurlEasy?) -> Exchange.ServerReport {
        Exchange.ServerReport(remaining: easy?.contentLength, modified: easy?.fileTime.map { HTTPDate.format(secondsSince1970: $0) })
    }

    /// The run `fetch` works for, while the transfer runs it.
    private func currentRun(_ transfer: Transfer, _ fetch: SegmentFetch) -> SegmentedDownload? {
        guard transfer.phase == .running, let run = transfer.segmented, run.owns(fetch) else { return nil }
        return run
    }

    private func headerLine(_ transfer: Transfer, _ fetch: SegmentFetch, _ line: String) -> Bool {
        guard let run = currentRun(transfer, fetch), fetch.exchange != nil else { return false }
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
                run = replaceFromZero(transfer, run, fetch)
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

    /// The origin sent the whole file to a request for the rest of it: a fresh run from zero, with the same fetch
    /// (earlier writes still on their way are the old run's, so they no longer count).
    private func replaceFromZero(_ transfer: Transfer, _ old: SegmentedDownload, _ fetch: SegmentFetch) -> SegmentedDownload {
        let run = SegmentedDownload(table: .open(from: 0), validator: nil, target: 1, requestURL: old.requestURL)
        fetch.segmentStart = 0
        run.fetches[0] = fetch
        run.savedBytes = 0
        run.lastSave = old.lastSave
        transfer.segmented = run
        return run
    }

    /// Splits the file when the accepted answer to the rest of it allows that; its exchange keeps the first range.
    /// Called inside the header callback: the other fetches connect on the next turn of the queue.
    private func splitIfWorthIt(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, _ head: ResponseHead) {
        guard let total = run.table.knownTotal, fetch.position < total, let easy = fetch.easy,
              head.status == 206 || head.acceptsByteRanges,
              let validator = Transfer.ifRangeValidator(etag: head.etag, lastModified: head.lastModified) else { return }
        let wanted = wantedConnections(transfer, total: total)
        let requestURL = easy.effectiveURL ?? run.requestURL
        if transfer.spec.connections == nil, !hasOtherSources(transfer) {
            // Nobody asked for a number: start on this one connection and add more only while they raise the
            // total (`AdaptiveSplit`, run by the ticker through `adapt`).
            guard wanted > 1 else { return }
            run.adaptive = AdaptiveSplit(wanted: wanted, tuning: adaptiveTuning, now: Self.monotonicSeconds(),
                                         bytesReceived: run.bytesReceived)
            run.deferredSplit = (validator, requestURL)
            return
        }
        let room = 1 + max(0, configuration.maxPerHost - connectionsInUse(host: transfer.host))
        let count = min(room, SegmentTable.segmentCount(
            remaining: total - fetch.position, connections: wanted, minimumSize: configuration.minimumSegmentSize))
        guard count > 1, beginSplit(transfer, run, fetch, into: count, target: wanted, validator: validator, requestURL: requestURL) else { return }
        queue.async {
            self.fillConnections(transfer)
            self.applyRateLimits()
        }
    }

    /// Makes the run a split one: `fetch`'s segment divided into `count` ranges, `target` connections wanted, the
    /// segment state saved from now on. False (nothing changed) when preallocating the rest of the file would take
    /// the free space below the reserve: one connection then writes as bytes arrive and waits with `disk_full`.
    private func beginSplit(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, into count: Int, target: Int,
                            validator: String, requestURL: String) -> Bool {
        guard let total = run.table.knownTotal else { return false }
        if let free = freeBytes(needing: total - fetch.position), free - (total - fetch.position) < configuration.minFreeSpace { return false }
        run.split(fetch, into: count, validator: validator, target: target, requestURL: requestURL,
                  alignment: segmentAlignment(transfer))
        run.savedBytes = run.table.bytesWritten
        run.lastSave = Self.monotonicSeconds()
        if let sidecar = run.sidecar {
            transfer.writer.prepareSegments(sidecar) { error in
                guard let error else { return }
                self.writeFailed(transfer, run, error)
            }
        }
        logger.debug("segmented", metadata: ["id": "\(transfer.id)", "segments": "\(count)", "target": "\(target)", "total": "\(total)"])
        return true
    }

    /// Where segment boundaries fall: with parts stored while downloading (a cluster's object store), on part
    /// boundaries, so that a segment never holds a part it shares with its neighbour unstored (issue 33); else anywhere.
    private func segmentAlignment(_ transfer: Transfer) -> Int64 {
        guard objectStore != nil, uploadLedger != nil, let size = transfer.bytesExpected, size > 0 else { return 1 }
        return transfer.parts.record?.partSize ?? PartPlan.partSize(for: size, preferred: configuration.objectPartSize)
    }

    private var adaptiveTuning: AdaptiveSplit.Tuning {
        AdaptiveSplit.Tuning(settle: configuration.adaptiveSettle, fastEnough: configuration.adaptiveFastEnough,
                             minimumGain: configuration.adaptiveMinimumGain)
    }

    /// One tick of a run's connection ramp: a raise splits the file on the first one (the running exchange keeps
    /// its range, a free connection takes over the back half) and lets more connections take over halves after.
    func adapt(_ transfer: Transfer, _ run: SegmentedDownload, now: Double) {
        guard var adaptive = run.adaptive, let total = run.table.knownTotal else { return }
        let target = adaptive.decide(now: now, bytesReceived: run.bytesReceived, remaining: total - run.bytesReceived,
                                     minimumPiece: configuration.minimumSegmentSize)
        run.adaptive = adaptive.isFinished ? nil : adaptive
        guard let target else { return }
        if !run.isSplit {
            guard let plan = run.deferredSplit, run.fetches.count == 1, let fetch = run.fetches.values.first,
                  beginSplit(transfer, run, fetch, into: 1, target: target, validator: plan.validator, requestURL: plan.requestURL)
            else {
                run.adaptive = nil
                return
            }
        } else {
            run.target = target
        }
        logger.debug("connections raised", metadata: ["id": "\(transfer.id)", "target": "\(target)"])
        fillConnections(transfer)
        applyRateLimits()
    }

    /// Hands a chunk to the writer at the fetch's position, never past its segment's end (which moves when a
    /// connection takes over the tail); reaching the end before the response's end cuts the exchange there.
    private func body(_ transfer: Transfer, _ fetch: SegmentFetch, _ bytes: UnsafeRawBufferPointer) -> CurlEasy.BodyDisposition {
        guard var run = currentRun(transfer, fetch), run.writeFailure == nil, fetch.exchange != nil else { return .abort }
        if fetch.exchange?.verdict == nil {
            // FTP and SFTP: judge what the server reported. HTTP: a response without a header block end
            // (HTTP/0.9-like): judge what we have.
            guard let verdict = fetch.exchange?.judgeBeforeBody(report: serverReport(fetch.easy), now: Date()),
                  carryOut(verdict, transfer, run, fetch),
                  let current = currentRun(transfer, fetch) else { return .abort }
            run = current
        }
        guard let exchange = fetch.exchange else { return .abort }
        let segmentEnd = run.table.segment(startingAt: fetch.segmentStart)?.end ?? exchange.position
        let step = exchange.step(forBody: bytes.count, segmentEnd: segmentEnd, ceiling: ceiling(transfer))
        guard case .write(let at, let count, let last) = step else {
            fetch.exchange?.take(step)
            switch step {
            case .discard, .excess: return .consumed
            case .write, .cut, .fail: return .abort
            }
        }
        if run.pendingWriteBytes >= configuration.writeBufferLimit || transfer.parts.backlogged || holdingForStop {
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

    /// The most bytes the file may reach while its size is not known up front: the size limit, or the room the
    /// spool's quota left, whichever is smaller.
    private func ceiling(_ transfer: Transfer) -> ByteCeiling? {
        var ceilings: [ByteCeiling] = []
        if let max = configuration.maxFileSize {
            ceilings.append(ByteCeiling(bytes: max, failure: .tooLarge("the file is larger than the limit of \(max) bytes")))
        }
        if let room = transfer.spoolLimit {
            ceilings.append(ByteCeiling(bytes: room, failure: .quotaExceeded("the file grew past \(room) bytes, the room left under the spool's quota")))
        }
        return ceilings.min { $0.bytes < $1.bytes }
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
        release(fetch, of: run)
        resumePausedFetches(transfer, run)
        finishIfDone(transfer)
    }

    /// Unpauses the connections paused for back-pressure once neither holds them: the writer's backlog is down to half
    /// its limit and no stored part waits for an upload slot (`LiveParts.backlogged`). Never inside a libcurl call.
    func resumePausedFetches(_ transfer: Transfer, _ run: SegmentedDownload) {
        guard run.pendingWriteBytes <= configuration.writeBufferLimit / 2, !transfer.parts.backlogged, !holdingForStop else { return }
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
        let report = serverReport(easy)
        fetch.easy = nil
        easy.cleanup()
        // FTP or SFTP without a body byte: the file was complete already, or is empty.
        if let run = currentRun(transfer, fetch), let verdict = fetch.exchange?.judgeAtEnd(code: Int32(code.rawValue), report: report) {
            _ = carryOut(verdict, transfer, run, fetch)
        }
        guard let exchange = fetch.endExchange(), let run = currentRun(transfer, fetch) else { return }
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
            release(fetch, of: run)
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

    /// Forgets a fetch once its whole segment is received and written.
    private func release(_ fetch: SegmentFetch, of run: SegmentedDownload) {
        guard fetch.finishedReceiving, run.owns(fetch),
              run.table.segment(startingAt: fetch.segmentStart)?.isComplete == true else { return }
        run.fetches[fetch.segmentStart] = nil
    }

    // MARK: stopping and changing

    /// Removes every exchange of the run from the multi; pending back-offs lapse with the run.
    func disconnectFetches(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let run = transfer.segmented else { return }
        for fetch in run.fetches.values {
            fetch.retryAt = nil
            fetch.pausedForBackpressure = false
            if let easy = fetch.easy {
                multi.remove(easy)
                easy.cleanup()
                fetch.easy = nil
            }
            _ = fetch.endExchange()
        }
    }

    /// Saves the table of a running split download when it changed and the interval passed.
    func saveSegmentsIfDue(_ transfer: Transfer, now: Double) {
        guard transfer.phase == .running, let run = transfer.segmented, !run.saving,
              run.table.bytesWritten != run.savedBytes,
              now - run.lastSave >= configuration.segmentStateInterval, let sidecar = run.sidecar else { return }
        run.saving = true
        run.lastSave = now
        run.savedBytes = sidecar.table.bytesWritten
        transfer.writer.saveSegments(sidecar) { error in
            run.saving = false
            if let error {
                run.savedBytes = -1
                self.logger.warning("saving segment state failed", metadata: ["id": "\(transfer.id)", "error": "\(error)"])
            }
        }
    }

    /// Points the run at a new URL. A split run's exchanges reconnect and each continues its segment from where it
    /// is; otherwise the partial file is opened again and the rest of it asked for (validated by If-Range).
    func changeURL(id: String, _ url: SubmittedURL) {
        guard let transfer = transfers[id] else { return }
        transfer.spec.url = url
        if !transfer.sources.isEmpty { transfer.sources[0] = TransferSource(url: url, bytesReceived: transfer.sources[0].bytesReceived) }
        guard transfer.phase == .running, let run = transfer.segmented else { return }
        guard run.isSplit else {
            disconnectFetches(transfer)
            transfer.segmented = nil
            transfer.phase = .opening
            transfer.writer.openPartial(keepExisting: true, validator: transfer.ifRangeValidator, total: transfer.bytesExpected) { result in
                self.opened(transfer, result)
            }
            return
        }
        disconnectFetches(transfer)
        if transfer.referenceSource == 0 { run.requestURL = url.normalized }
        for fetch in run.fetches.values { fetch.failures = 0 }
        fillConnections(transfer)
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
