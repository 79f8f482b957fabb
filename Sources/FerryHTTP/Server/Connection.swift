import Dispatch
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// One accepted TCP connection: reads and parses requests, runs the handler for each in a Task, writes the responses
/// in request order, and enforces the timeouts.
///
/// Every property is confined to `queue` (one of the server's `ConnectionQueue`s), checked with
/// `dispatchPrecondition`. The fd carries a read and a write source plus a timer; it is closed only in the last of
/// their cancel handlers.
final class Connection: @unchecked Sendable {
    enum Phase {
        /// Reading and answering requests.
        case open
        /// No new requests: answer the ones received, then close.
        case draining
        /// Write side shut down; reading and discarding until the peer closes (or 2 s), so it sees our last response.
        case lingering
        case closed
    }

    /// Requests received but not yet answered, beyond which reading pauses.
    static let maxPipelinedRequests = 16
    /// Producer bytes moved into the output buffer at a time.
    static let outputChunkLimit = 256 * 1024
    static let lingerNanoseconds: UInt64 = 2_000_000_000

    let fd: Int32
    let home: ConnectionQueue
    let queue: DispatchQueue
    let context: ServerContext
    let remoteAddress: String

    var parser: RequestParser
    var phase = Phase.open

    private var readSource: DispatchSourceRead?
    var writeSource: DispatchSourceWrite?
    private var timer: DispatchSourceTimer?
    private var liveSources = 3
    private var readSuspended = false
    var writeArmed = false
    private var armedDeadline: UInt64?

    /// Requests in order; the first is the next (or current) to be answered.
    var exchanges: [Exchange] = []
    /// The exchange whose body is being read, with its head.
    var reading: (exchange: Exchange, head: RequestHead)?
    /// A request asked to switch protocols: nothing more is parsed until its answer says whether it did.
    var awaitingUpgrade = false
    /// After a `101`: what receives the client's bytes instead of the parser.
    var upgradeReader: UpgradeReader?

    private var headStartedAt: UInt64?
    private var lastReadAt: UInt64
    var lastWriteAt: UInt64
    var lastActivityAt: UInt64
    private var lingerStartedAt: UInt64 = 0

    // Response writing state (see Connection+Writing.swift).
    var output: [UInt8] = []
    var outputSent = 0
    var body = BodySource.none
    var pendingParts: ArraySlice<BodyPart> = []
    var activeStream: ResponseStream?
    var streamBytesInOutput = 0
    /// What is left to send of the stream's file region being sent (`ResponseStream.writeFile`).
    var streamRegion: StreamFileRegion?
    var responseInProgress: Exchange?
    var responseBytes: Int64 = 0

    init(fd: Int32, home: ConnectionQueue, context: ServerContext, remoteAddress: String) {
        self.fd = fd
        self.home = home
        self.queue = home.queue
        self.context = context
        self.remoteAddress = remoteAddress
        self.parser = RequestParser(limits: context.configuration.limits, maxBodySize: context.configuration.maxBodySize)
        let now = Connection.now()
        lastReadAt = now
        lastWriteAt = now
        lastActivityAt = now
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    static func nanoseconds(_ seconds: Double) -> UInt64 {
        seconds <= 0 ? 0 : UInt64(min(seconds, 1e9) * 1e9)
    }

    /// Creates and resumes the sources. Call on `queue`.
    func start() {
        dispatchPrecondition(condition: .onQueue(queue))
        let read = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let write = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        read.setEventHandler { [unowned self] in self.handleReadable() }
        write.setEventHandler { [unowned self] in self.handleWritable() }
        timer.setEventHandler { [unowned self] in self.timerFired() }
        // The cancel handlers hold the connection until the last one ran.
        for source in [read, write, timer] as [DispatchSourceProtocol] {
            source.setCancelHandler { self.sourceCancelled() }
        }
        readSource = read
        writeSource = write
        self.timer = timer
        timer.schedule(deadline: .distantFuture)
        timer.resume()
        read.resume()
        // The write source stays suspended until a write would block.
        refreshTimer()
    }

    private func sourceCancelled() {
        dispatchPrecondition(condition: .onQueue(queue))
        liveSources -= 1
        guard liveSources == 0 else { return }
        Glibc.close(fd)
        readSource = nil
        writeSource = nil
        timer = nil
        context.openConnections.subtract(1, ordering: .relaxed)
        if let server = context.server {
            server.connectionClosed(self)
        } else {
            context.group.leave()
        }
    }

    // MARK: - Reading

    private func handleReadable() {
        dispatchPrecondition(condition: .onQueue(queue))
        let buffer = home.readBuffer
        let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
        if phase == .lingering {
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { closeNow() }
            return
        }
        guard phase == .open else { suspendReading(); return }
        if let upgradeReader {
            if n > 0 {
                lastReadAt = Connection.now()
                upgradeReader(Array(UnsafeRawBufferPointer(rebasing: buffer[0..<n])))
            } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                closeNow()
            }
            return
        }
        if n > 0 {
            lastReadAt = Connection.now()
            parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            processInput()
        } else if n == 0 {
            peerClosedInput()
        } else if errno != EAGAIN && errno != EINTR {
            closeNow()
        }
    }

    /// Turns buffered bytes into exchanges while the pipeline has room.
    func processInput() {
        dispatchPrecondition(condition: .onQueue(queue))
        while phase == .open && !awaitingUpgrade && exchanges.count < Connection.maxPipelinedRequests {
            guard let event = parser.next() else {
                if parser.isReadingHead && headStartedAt == nil { headStartedAt = Connection.now() }
                break
            }
            switch event {
            case .head(let head):
                headStartedAt = nil
                let exchange = Exchange(method: head.method, target: head.target, version: head.version,
                                        keepAlive: head.keepAlive,
                                        wantsContinue: head.expectsContinue && parser.bufferedByteCount == 0)
                exchanges.append(exchange)
                reading = (exchange, head)
            case .end(let requestBody):
                guard let (exchange, head) = reading else { continue }
                reading = nil
                let request = HTTPRequest(method: head.method, target: head.target, version: head.version,
                                          headers: head.headers, body: requestBody, remoteAddress: remoteAddress)
                // The bytes after a request to switch protocols may be the other protocol's: wait for the answer.
                if head.headers["Upgrade"] != nil { awaitingUpgrade = true }
                run(request, for: exchange)
            case .error(let error):
                reject(errorResponse(HTTPStatus(code: error.statusCode), code: error.code, message: error.message))
            }
        }
        if phase != .open || awaitingUpgrade || exchanges.count >= Connection.maxPipelinedRequests {
            suspendReading()
        }
        pump()
    }

    /// Answers the request being read (or a new pseudo-exchange) with `response`, then closes.
    private func reject(_ response: HTTPResponse) {
        if let (exchange, _) = reading {
            exchange.response = response
            exchange.closeAfter = true
            reading = nil
        } else {
            exchanges.append(Exchange.rejected(response))
        }
        phase = .draining
        headStartedAt = nil
        suspendReading()
    }

    private func run(_ request: HTTPRequest, for exchange: Exchange) {
        switch context.responder(request) {
        case .now(let response):
            deliver(response, to: exchange)
        case .later(let work):
            Task {
                let response = await work()
                self.queue.async { self.deliver(response, to: exchange) }
            }
        }
    }

    private func deliver(_ response: HTTPResponse, to exchange: Exchange) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        exchange.response = response
        if exchange === exchanges.first { pump() }
    }

    private func peerClosedInput() {
        if reading != nil || exchanges.isEmpty {
            closeNow()
        } else {
            // Half-closed: answer what was received, then close.
            phase = .draining
            suspendReading()
            pump()
        }
    }

    func suspendReading() {
        guard !readSuspended, let readSource else { return }
        readSuspended = true
        readSource.suspend()
    }

    func resumeReading() {
        guard readSuspended, let readSource else { return }
        readSuspended = false
        readSource.resume()
    }

    /// After a response: read on if the pipeline had paused reading.
    func continueReading() {
        awaitingUpgrade = false
        guard phase == .open else { return }
        resumeReading()
        if parser.bufferedByteCount > 0 { processInput() }
    }

    // MARK: - Closing

    /// Closes after the last response: shuts down the write side and lingers briefly so the peer gets it.
    func closeGracefully() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .open || phase == .draining else { return }
        phase = .lingering
        lingerStartedAt = Connection.now()
        Glibc.shutdown(fd, Int32(SHUT_WR))
        resumeReading()
        refreshTimer()
    }

    /// Closes at once: cancels the sources (the fd is closed in the last cancel handler), ends any stream.
    func closeNow() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase != .closed else { return }
        phase = .closed
        // A response cut off (the client went, a timeout) still gets its access-log line, with what was sent.
        if let exchange = responseInProgress { logAccess(exchange, interrupted: true) }
        releaseBody()
        if let stream = activeStream {
            activeStream = nil
            stream.close()
        }
        exchanges.removeAll()
        reading = nil
        upgradeReader = nil
        responseInProgress = nil
        output = []
        if let readSource {
            readSource.cancel()
            resumeReading()
        }
        if let writeSource {
            writeSource.cancel()
            if !writeArmed {
                writeArmed = true
                writeSource.resume()
            }
        }
        timer?.cancel()
    }

    /// Server shutdown: stop taking requests, finish the ones in flight (streams end), close idle connections.
    func beginShutdown() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard phase == .open || phase == .draining else { return }
        phase = .draining
        suspendReading()
        if reading != nil || exchanges.isEmpty {
            closeNow()
            return
        }
        if let stream = activeStream {
            if case .stream(_, let chunked, _) = body, chunked {
                stream.requestFinish()
            } else {
                closeNow()
                return
            }
        }
        pump()
    }

    // MARK: - Timeouts

    private var isIdle: Bool { exchanges.isEmpty && reading == nil && !parser.isReadingHead }

    private func currentDeadline() -> UInt64? {
        let configuration = context.configuration
        if phase == .lingering { return lingerStartedAt + Connection.lingerNanoseconds }
        var deadline = UInt64.max
        if writeArmed { deadline = min(deadline, lastWriteAt + Connection.nanoseconds(configuration.writeStallTimeout)) }
        if let headStartedAt, parser.isReadingHead {
            deadline = min(deadline, headStartedAt + Connection.nanoseconds(configuration.headerTimeout))
        }
        if reading != nil { deadline = min(deadline, lastReadAt + Connection.nanoseconds(configuration.bodyTimeout)) }
        if isIdle { deadline = min(deadline, lastActivityAt + Connection.nanoseconds(configuration.idleTimeout)) }
        return deadline == .max ? nil : deadline
    }

    /// Arms the timer for the earliest deadline, unless it is already armed earlier (it then re-checks when firing).
    func refreshTimer() {
        guard phase != .closed, let timer, let deadline = currentDeadline() else { return }
        if let armedDeadline, armedDeadline <= deadline { return }
        armedDeadline = deadline
        timer.schedule(deadline: DispatchTime(uptimeNanoseconds: deadline), leeway: .milliseconds(20))
    }

    private func timerFired() {
        dispatchPrecondition(condition: .onQueue(queue))
        armedDeadline = nil
        guard phase != .closed, let deadline = currentDeadline() else { return }
        let now = Connection.now()
        guard now >= deadline else {
            refreshTimer()
            return
        }
        let configuration = context.configuration
        func expired(_ since: UInt64, _ seconds: Double) -> Bool { now >= since + Connection.nanoseconds(seconds) }
        if phase == .lingering {
            closeNow()
        } else if writeArmed && expired(lastWriteAt, configuration.writeStallTimeout) {
            context.logger.debug("write stalled, closing", metadata: ["remote": "\(remoteAddress)"])
            closeNow()
        } else if parser.isReadingHead, let headStartedAt, expired(headStartedAt, configuration.headerTimeout) {
            timeout("Request header not received in time.")
        } else if reading != nil && expired(lastReadAt, configuration.bodyTimeout) {
            timeout("Request body not received in time.")
        } else if isIdle && expired(lastActivityAt, configuration.idleTimeout) {
            closeNow()
        } else {
            refreshTimer()
        }
    }

    private func timeout(_ message: String) {
        reject(errorResponse(.requestTimeout, code: "request_timeout", message: message))
        pump()
    }
}
