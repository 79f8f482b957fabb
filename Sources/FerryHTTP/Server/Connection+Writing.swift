import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Where the rest of the current response body comes from.
enum BodySource {
    case none
    /// A large in-memory body, written straight from the array.
    case buffer([UInt8], sent: Int)
    /// A file region, sent with sendfile(2). The fd is owned by the connection until `releaseBody()`.
    case file(fd: Int32, offset: Int64, remaining: Int64)
    /// A producer's stream; `remaining` counts down a declared length.
    case stream(ResponseStream, chunked: Bool, remaining: Int64?)
}

/// Response writing: the output buffer, body sources, ordering and keep-alive. All on the connection's queue.
extension Connection: ResponseStreamSink {
    enum Progress {
        case progressed
        /// The socket is full: wait for the write source.
        case blocked
        /// Waiting for a producer (stream) or a handler.
        case waiting
        case done
        case failed
    }

    /// Bodies at most this large are copied into the output buffer after the head (one send for small responses).
    static let inlineBodyLimit = 64 * 1024

    /// Writes as much as the socket takes, starting responses in request order as they become ready.
    func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        reclaimSocket()
        loop: while phase == .open || phase == .draining {
            if outputSent < output.count {
                switch flushOutput() {
                case .progressed: continue
                case .blocked: armWrite(); break loop
                default: closeNow(); return
                }
            }
            if let exchange = responseInProgress {
                switch produce(exchange) {
                case .progressed: continue
                case .blocked: armWrite(); break loop
                case .waiting: break loop
                case .done: finishResponse(exchange); continue
                case .failed: closeNow(); return
                }
            }
            guard let next = exchanges.first else { break }
            if next.wantsContinue {
                next.wantsContinue = false
                if let reading, reading.exchange === next, parser.bufferedByteCount == 0 {
                    output.append(contentsOf: ResponseHead.continueLine)
                    continue
                }
            }
            guard let response = next.response else { break }
            beginResponse(next, response)
        }
        lendSocketIfIdle()
        refreshTimer()
    }

    /// Takes the socket back from the active stream's producers (see `ResponseStream`'s direct lane), with the bytes
    /// they left unsent, which go out first.
    private func reclaimSocket() {
        guard let stream = activeStream else { return }
        let (tail, sent) = stream.reclaimSocket()
        if sent > 0 {
            responseBytes += Int64(sent)
            lastWriteAt = Connection.now()
        }
        guard !tail.isEmpty else { return }
        output.append(contentsOf: tail)
        streamBytesInOutput += tail.count
    }

    /// Lends the socket to the active stream's producers while the connection has nothing of its own to write: the
    /// body so far is sent, nothing is queued, and the body has no declared length to count down.
    private func lendSocketIfIdle() {
        guard phase == .open || phase == .draining, !writeArmed, outputSent >= output.count,
              let stream = activeStream, case .stream(let current, let chunked, nil) = body, current === stream,
              !stream.hasPending, streamRegion == nil, !stream.finishRequested, !stream.abortRequested else { return }
        stream.lendSocket(fd, chunked: chunked)
    }

    private func flushOutput() -> Progress {
        let n = output.withUnsafeBytes { raw in
            Glibc.send(fd, raw.baseAddress! + outputSent, raw.count - outputSent, Int32(MSG_NOSIGNAL))
        }
        if n > 0 {
            outputSent += n
            responseBytes += Int64(n)
            lastWriteAt = Connection.now()
            if outputSent == output.count {
                context.recordOutputBuffer(output.count)
                // A stream waiting for its producer (an idle event stream) holds no buffer: thousands may be open.
                if output.capacity > 2 * Connection.outputChunkLimit || activeStream?.hasPending == false {
                    output = []
                } else {
                    output.removeAll(keepingCapacity: true)
                }
                outputSent = 0
                if streamBytesInOutput > 0 {
                    let sent = streamBytesInOutput
                    streamBytesInOutput = 0
                    activeStream?.didSend(sent)
                }
            }
            return .progressed
        }
        // The socket refuses more: what the client left unread is held here (`peakOutputBufferBytes`).
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { context.recordOutputBuffer(output.count) }
        return sendFailure(n)
    }

    private func armWrite() {
        guard !writeArmed, let writeSource else { return }
        writeArmed = true
        writeSource.resume()
    }

    func handleWritable() {
        dispatchPrecondition(condition: .onQueue(queue))
        if writeArmed, phase != .closed, let writeSource {
            writeArmed = false
            writeSource.suspend()
        }
        pump()
    }

    func streamDidChange(_ stream: ResponseStream) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard stream === activeStream, !writeArmed else { return }
        pump()
    }

    // MARK: - Starting a response

    private func beginResponse(_ exchange: Exchange, _ original: HTTPResponse) {
        if case .upgrade(let start) = original.body {
            beginUpgrade(exchange, original, start)
            return
        }
        var response = original
        var fileFD: Int32 = -1
        if case .file(let file) = response.body, exchange.method != .HEAD, response.status.allowsBody {
            fileFD = Glibc.open(file.path, O_RDONLY | O_CLOEXEC)
            if fileFD < 0 {
                context.logger.error("cannot open response file", metadata: [
                    "path": "\(file.path)", "error": "\(SocketError("open", file.path))"])
                response = errorResponse(.internalServerError, code: "internal", message: "Internal error.")
            }
        }
        responseInProgress = exchange
        responseBytes = 0
        exchange.status = response.status.code

        // While draining, requests already received behind this one are still answered on this connection
        // (finishResponse closes after the last), so only the last response says `Connection: close`.
        var keepAlive = exchange.keepAlive && !exchange.closeAfter && (phase == .open || exchanges.count > 1)
            && !response.headers.listValues("connection").contains { ASCII.equalsIgnoringCase($0, "close") }
        let framing: ResponseHead.Framing
        if !response.status.allowsBody {
            framing = .none
        } else {
            switch response.body {
            case .empty:
                let declared = response.headers["Content-Length"].flatMap { RequestSyntax.length(Substring($0)) }
                framing = .length(Int64(declared ?? 0))
            case .stream(nil, _):
                if exchange.version == .http1_1 {
                    framing = .chunked
                } else {
                    framing = .closeDelimited
                    keepAlive = false
                }
            default:
                framing = .length(response.body.knownLength ?? 0)
            }
        }
        exchange.closeAfter = !keepAlive

        if output.isEmpty { output.reserveCapacity(1024) }
        ResponseHead.serialize(response, framing: framing, keepAlive: keepAlive, requestVersion: exchange.version,
                               date: home.dateHeaderLine(), into: &output)

        let sendBody = response.status.allowsBody && exchange.method != .HEAD
        switch response.body {
        case .empty:
            break
        case .bytes(let bytes) where sendBody:
            if bytes.count <= Connection.inlineBodyLimit {
                output.append(contentsOf: bytes)
            } else {
                body = .buffer(bytes, sent: 0)
            }
        case .file(let file) where sendBody:
            if file.length > 0 {
                body = .file(fd: fileFD, offset: file.offset, remaining: file.length)
            } else {
                Glibc.close(fileFD)
            }
        case .parts(let parts) where sendBody:
            pendingParts = parts[...]
        case .stream(let length, let start):
            let stream = ResponseStream(queue: queue)
            if sendBody {
                stream.sink = self
                activeStream = stream
                body = .stream(stream, chunked: framing == .chunked, remaining: length)
            } else {
                stream.close()
            }
            DispatchQueue.global().async { start(stream) }
        default:
            break
        }
    }

    /// Sends the `101` head, then the connection carries the other protocol until either side closes: the stream's
    /// bytes go out as they are, the client's go to the reader, and the stream's `finish` closes the connection.
    private func beginUpgrade(_ exchange: Exchange, _ response: HTTPResponse,
                              _ start: @Sendable (ResponseStream) -> UpgradeReader) {
        responseInProgress = exchange
        responseBytes = 0
        exchange.status = response.status.code
        exchange.closeAfter = true
        ResponseHead.serialize(response, framing: .none, keepAlive: true, requestVersion: exchange.version,
                               date: home.dateHeaderLine(), into: &output)
        let stream = ResponseStream(queue: queue)
        stream.sink = self
        activeStream = stream
        body = .stream(stream, chunked: false, remaining: nil)
        upgradeReader = start(stream)
        awaitingUpgrade = false
        resumeReading()
        if parser.bufferedByteCount > 0 { upgradeReader?(parser.takeBuffered()) }
    }

    // MARK: - Producing body bytes (called only when the output buffer is empty)

    private func produce(_ exchange: Exchange) -> Progress {
        switch body {
        case .none:
            guard let part = pendingParts.popFirst() else { return .done }
            switch part {
            case .bytes(let bytes):
                output.append(contentsOf: bytes)
            case .file(let file):
                guard file.length > 0 else { return .progressed }
                let partFD = Glibc.open(file.path, O_RDONLY | O_CLOEXEC)
                guard partFD >= 0 else {
                    context.logger.error("cannot open response part", metadata: ["error": "\(SocketError("open", file.path))"])
                    return .failed
                }
                body = .file(fd: partFD, offset: file.offset, remaining: file.length)
            }
            return .progressed
        case .buffer(let bytes, let sent):
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                responseBytes += Int64(n)
                lastWriteAt = Connection.now()
                body = sent + n == bytes.count ? .none : .buffer(bytes, sent: sent + n)
                return .progressed
            }
            return sendFailure(n)
        case .file(let fileFD, let offset, let remaining):
            var position = off_t(offset)
            let n = sendfile(fd, fileFD, &position, Int(min(remaining, 1 << 20)))
            if n > 0 {
                responseBytes += Int64(n)
                lastWriteAt = Connection.now()
                if remaining - Int64(n) == 0 {
                    Glibc.close(fileFD)
                    body = .none
                } else {
                    body = .file(fd: fileFD, offset: Int64(position), remaining: remaining - Int64(n))
                }
                return .progressed
            }
            if n == 0 {
                context.logger.error("response file shorter than announced", metadata: ["remote": "\(remoteAddress)"])
                return .failed
            }
            return sendFailure(n)
        case .stream(let stream, let chunked, let remaining):
            if streamRegion != nil { return sendRegion(of: stream, chunked: chunked) }
            if let region = stream.takeFileRegion(within: remaining) {
                if chunked { output.append(contentsOf: Array(String(region.length, radix: 16).utf8) + [13, 10]) }
                streamRegion = region
                body = .stream(stream, chunked: chunked, remaining: remaining.map { $0 - Int64(region.length) })
                return .progressed
            }
            if stream.hasPending {
                var chunks = stream.takePending(limit: Connection.outputChunkLimit)
                var size = chunks.reduce(0) { $0 + $1.count }
                streamBytesInOutput += size
                if let remaining, Int64(size) > remaining {
                    // The producer wrote more than it declared: send what fits, then abort.
                    var allowed = Int(remaining)
                    chunks = chunks.compactMap { chunk in
                        defer { allowed -= min(allowed, chunk.count) }
                        return allowed > 0 ? Array(chunk.prefix(allowed)) : nil
                    }
                    size = Int(remaining)
                }
                if chunked {
                    output.append(contentsOf: String(size, radix: 16).utf8)
                    output.append(contentsOf: [13, 10])
                }
                for chunk in chunks { output.append(contentsOf: chunk) }
                if chunked { output.append(contentsOf: [13, 10]) }
                body = .stream(stream, chunked: chunked, remaining: remaining.map { $0 - Int64(size) })
                return .progressed
            }
            if stream.abortRequested { return .failed }
            if let remaining, remaining <= 0, !stream.finishRequested {
                return .waiting  // length reached; wait for finish()
            }
            if stream.finishRequested {
                if let remaining, remaining != 0 {
                    context.logger.error("streamed body shorter than its declared length", metadata: ["remote": "\(remoteAddress)"])
                    return .failed
                }
                if chunked { output.append(contentsOf: "0\r\n\r\n".utf8) }
                body = .none
                return .progressed
            }
            return .waiting
        }
    }

    /// Sends the next piece of the stream's file region; a file cut short under it (a restart) ends the connection.
    private func sendRegion(of stream: ResponseStream, chunked: Bool) -> Progress {
        guard var region = streamRegion else { return .progressed }
        let n = region.send(to: fd)
        guard n > 0 else { return n == 0 ? .failed : sendFailure(n) }
        responseBytes += Int64(n)
        lastWriteAt = Connection.now()
        stream.didSend(n)
        streamRegion = region.length > 0 ? region : nil
        if region.length == 0, chunked { output.append(contentsOf: [13, 10]) }
        return .progressed
    }

    private func sendFailure(_ n: Int) -> Progress {
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .blocked }
        if n < 0 && errno == EINTR { return .progressed }
        return .failed
    }

    // MARK: - Finishing a response

    private func finishResponse(_ exchange: Exchange) {
        responseInProgress = nil
        upgradeReader = nil
        pendingParts = []
        streamRegion = nil
        if let stream = activeStream {
            activeStream = nil
            stream.close()
        }
        if !exchanges.isEmpty { exchanges.removeFirst() }
        lastActivityAt = Connection.now()
        logAccess(exchange)
        if exchange.closeAfter || (phase == .draining && exchanges.isEmpty) {
            closeGracefully()
        } else {
            continueReading()
        }
    }

    /// Closes a file still held by the body (abort paths).
    func releaseBody() {
        if case .file(let fileFD, _, _) = body { Glibc.close(fileFD) }
        body = .none
        streamRegion = nil
        pendingParts = []
    }

    /// The access log's line for `exchange`; `interrupted` when the connection closes before its response ended.
    func logAccess(_ exchange: Exchange, interrupted: Bool = false) {
        let micros = (DispatchTime.now().uptimeNanoseconds - exchange.startedAt.uptimeNanoseconds) / 1000
        let bytes = responseBytes
        let remote = remoteAddress
        context.logger.info(Logger.Message(stringLiteral: AccessLogLine.format(
            method: exchange.method.rawValue, target: exchange.target, status: exchange.status,
            bytes: bytes, micros: micros, remote: remote, interrupted: interrupted)))
    }
}
