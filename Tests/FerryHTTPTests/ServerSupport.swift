import Foundation
import Logging
import Synchronization
import Testing
@testable import FerryHTTP
import FerryTestSupport
#if canImport(Glibc)
import Glibc
#endif

// Support for the live-server tests: a server on 127.0.0.1 port 0 that is always shut down, a raw blocking client
// that can reset, half-close and read slowly, and a way to run that blocking client off the Swift concurrency pool.

/// Seconds since an arbitrary start, monotonic.
func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

/// Logs only errors, unless `FERRY_TEST_LOG` is set.
func serverTestLogger() -> Logger {
    var logger = Logger(label: "ferry.http.tests")
    logger.logLevel = ProcessInfo.processInfo.environment["FERRY_TEST_LOG"] == nil ? .critical : .debug
    return logger
}

/// A configuration for tests: 127.0.0.1, port 0, small timeouts so timeout paths finish quickly.
func testServerConfiguration() -> HTTPServerConfiguration {
    HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxConnections: 1000, maxBodySize: 64 * 1024,
                            headerTimeout: 3, idleTimeout: 5, writeStallTimeout: 3, bodyTimeout: 3,
                            connectionQueues: 2)
}

/// Starts a server, runs `body` with it and its port, and shuts it down whether `body` succeeds or throws.
func withServer<T: Sendable>(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    immediate: ImmediateResponder? = nil,
    handler: @escaping HTTPHandler,
    _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
    var configuration = testServerConfiguration()
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, logger: serverTestLogger(), immediate: immediate,
                            handler: handler)
    let port = try #require(try server.start().first)
    let result: T
    do {
        result = try await body(server, port)
    } catch {
        await server.shutdown(grace: 0)
        throw error
    }
    await server.shutdown(grace: 0.2)
    return result
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Double = 5, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = monotonicSeconds() + timeout
    while monotonicSeconds() < deadline {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return condition()
}

/// A counter and event list shared between handlers and the test.
final class Recorder: Sendable {
    private let state = Mutex<[String]>([])

    func record(_ event: String) { state.withLock { $0.append(event) } }
    var events: [String] { state.withLock { $0 } }
    func count(of event: String) -> Int { state.withLock { $0.filter { $0 == event }.count } }
}

/// A value shared between threads, behind a mutex.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// A one-shot gate a handler can await until the test opens it (a handler that "takes forever" without holding a
/// pool thread). Opening twice is harmless.
final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The kernel's view of a connection's end, as seen by a reader.
enum WireEnding: Sendable, Equatable {
    /// Orderly close (FIN): recv returned 0.
    case closed
    /// ECONNRESET (or another error).
    case reset
    /// Nothing arrived within the timeout; the connection is still open.
    case timedOut
}

/// One response as a `WireClient` read it.
struct WireResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Interim (1xx) status codes received before this response.
    var interim: [Int] = []

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
    var closes: Bool { header("Connection")?.lowercased() == "close" }
}

struct WireError: Error, CustomStringConvertible {
    let description: String
    /// The errno of the failed system call, when one failed.
    var code: Int32?
    init(_ description: String, code: Int32? = nil) {
        self.description = description
        self.code = code
    }
}

/// A blocking raw TCP client to 127.0.0.1 for server tests: writes exact bytes, reads responses (length, chunked,
/// close-delimited), and can half-close, reset (SO_LINGER 0) or shrink its receive buffer to read slowly.
/// Not thread-safe: it may be handed from one thread to another, but is used by one thread at a time.
final class WireClient: @unchecked Sendable {
    let port: Int
    /// Bound on each blocking receive and send.
    let timeout: Double
    private(set) var fd: Int32
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    private(set) var ending: WireEnding?

    /// Connects; `timeout` bounds each blocking receive and send. `receiveBuffer` (set before connecting) caps the
    /// kernel's receive buffer, so an unread response backs up into the server quickly.
    init(port: Int, timeout: Double = 5, receiveBuffer: Int? = nil) throws {
        self.port = port
        self.timeout = timeout
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw WireError("socket: errno \(errno)") }
        if var size = receiveBuffer.map(Int32.init) {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var noDelay: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        setTimeout(timeout)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(fd)
            throw WireError("connect to 127.0.0.1:\(port): errno \(code)", code: code)
        }
    }

    deinit { close() }

    /// Tries to connect; returns the errno of a failed connect, nil when it connected (and closes it again).
    static func connectError(port: Int) -> Int32? {
        do {
            let client = try WireClient(port: port, timeout: 1)
            client.close()
            return nil
        } catch {
            return (error as? WireError)?.code ?? -1
        }
    }

    func setTimeout(_ seconds: Double) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    // MARK: - Writing

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw WireError("send: errno \(errno)")
            }
            offset += n
        }
    }

    func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// A GET (or other body-less) request with `Host`.
    static func request(_ target: String, method: String = "GET", version: String = "HTTP/1.1",
                        headers: [(String, String)] = []) -> String {
        var text = "\(method) \(target) \(version)\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }

    /// Shuts down the sending side (the server sees end of input).
    func halfClose() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Closes with SO_LINGER 0: the kernel sends RST instead of FIN.
    func reset() {
        guard fd >= 0 else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: - Reading

    /// Receives up to `limit` more bytes into the buffer; false at end, reset or timeout (recorded in `ending`).
    @discardableResult
    func fill(limit: Int = 64 * 1024) -> Bool {
        if ending != nil { return false }
        while true {
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, min(limit, $0.count), 0) }
            if n > 0 {
                buffer.append(contentsOf: scratch[0..<n])
                return true
            }
            if n == 0 {
                ending = .closed
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                return false  // timed out: not an ending, the connection may still deliver later
            } else {
                ending = .reset
            }
            return false
        }
    }

    /// Takes up to `count` buffered bytes, receiving at most `count` new ones when none are buffered (for slow reads).
    func take(upTo count: Int) -> [UInt8]? {
        if buffer.isEmpty && !fill(limit: count) { return nil }
        let n = min(count, buffer.count)
        defer { buffer.removeSubrange(..<n) }
        return Array(buffer[..<n])
    }

    func readLine() throws -> String {
        var searchFrom = 0
        while true {
            if let index = buffer[searchFrom...].firstIndex(of: 10) {
                var line = Array(buffer[..<index])
                buffer.removeSubrange(...index)
                if line.last == 13 { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            searchFrom = buffer.count
            guard fill() else { throw WireError("connection \(ending.map { "\($0)" } ?? "timed out") within a line") }
        }
    }

    func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard fill() else {
                throw WireError("body ended (\(ending.map { "\($0)" } ?? "timed out")) after \(buffer.count) of \(count) bytes")
            }
        }
        defer { buffer.removeSubrange(..<count) }
        return Array(buffer[..<count])
    }

    /// Reads the status line and fields of one response head (interim ones included).
    func readHead() throws -> (status: Int, headers: [(name: String, value: String)]) {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw WireError("bad status line \(statusLine.debugDescription)")
        }
        var headers: [(name: String, value: String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw WireError("bad header line \(line.debugDescription)") }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (status, headers)
    }

    /// Reads one final response (skipping interim 1xx ones); `head` true for a HEAD request (no body).
    func readResponse(head: Bool = false) throws -> WireResponse {
        var interim: [Int] = []
        var (status, headers) = try readHead()
        while status / 100 == 1 {
            interim.append(status)
            (status, headers) = try readHead()
        }
        var response = WireResponse(status: status, headers: headers, body: [], interim: interim)
        if head || status == 204 || status == 304 { return response }
        if let coding = response.header("Transfer-Encoding") {
            guard coding.lowercased() == "chunked" else { throw WireError("unexpected Transfer-Encoding \(coding)") }
            response.body = try readChunkedBody()
        } else if let lengthText = response.header("Content-Length") {
            guard let length = Int(lengthText) else { throw WireError("bad Content-Length \(lengthText)") }
            response.body = try readExactly(length)
        } else {
            while fill() {}
            guard ending == .closed else { throw WireError("close-delimited body ended by \(ending.map { "\($0)" } ?? "timeout")") }
            response.body = buffer
            buffer = []
        }
        return response
    }

    private func readChunkedBody() throws -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let sizeLine = try readLine()
            guard let size = Int(sizeLine.split(separator: ";").first ?? "", radix: 16) else {
                throw WireError("bad chunk size line \(sizeLine.debugDescription)")
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw WireError("chunk not followed by CRLF") }
        }
    }

    /// Waits up to `timeout` for the peer to end the connection, discarding what arrives meanwhile.
    /// Returns how it ended and how many bytes arrived first.
    func awaitEnd(timeout: Double) -> (ending: WireEnding, extraBytes: Int) {
        let deadline = monotonicSeconds() + timeout
        var extra = buffer.count
        buffer = []
        while ending == nil {
            let left = deadline - monotonicSeconds()
            if left <= 0 {
                setTimeout(timeout)
                return (.timedOut, extra)
            }
            setTimeout(max(0.01, left))
            if fill() {
                extra += buffer.count
                buffer = []
            }
        }
        setTimeout(timeout)
        return (ending ?? .timedOut, extra)
    }
}

/// Resident set size of this process in bytes (from /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// `Fixture.content(size:seed:)` served piecewise: any slice of the repeated block without building the whole body.
struct PatternSource: Sendable {
    /// The block twice, so any `blockSize` bytes from any offset are one contiguous slice.
    private let doubled: [UInt8]

    init(seed: Int) {
        let block = Fixture.block(seed: seed)
        doubled = block + block
    }

    /// `count` (at most `Fixture.blockSize`) bytes of the content starting at `offset`.
    func slice(at offset: Int, count: Int) -> ArraySlice<UInt8> {
        precondition(count <= Fixture.blockSize)
        let start = offset % Fixture.blockSize
        return doubled[start..<start + count]
    }

    /// Whether `bytes` equal the content at `offset` (memcmp, block by block).
    func matches(_ bytes: ArraySlice<UInt8>, at offset: Int) -> Bool {
        var checked = 0
        while checked < bytes.count {
            let count = min(Fixture.blockSize, bytes.count - checked)
            let expected = slice(at: offset + checked, count: count)
            let start = bytes.startIndex + checked
            let equal = bytes[start..<start + count].withUnsafeBytes { actual in
                expected.withUnsafeBytes { memcmp(actual.baseAddress!, $0.baseAddress!, count) == 0 }
            }
            if !equal { return false }
            checked += count
        }
        return true
    }
}

/// Writes pattern bytes to a `ResponseStream` in `chunk`-byte writes (`total` of them, or until the stream closes when
/// nil), backing off while more than `highWater` bytes are buffered, the way a well-behaved producer does.
///
/// `sent` is touched by one activation at a time: the first runs where `start` is called, each later one from the
/// `onDrain` handler the previous one registered (on the connection's queue).
final class PatternProducer: @unchecked Sendable {
    let source: PatternSource
    let total: Int?
    let chunk: Int
    let highWater: Int
    private var sent = 0
    private let maxBuffered = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)

    /// Largest `bufferedByteCount` seen right after a write.
    var largestBuffered: Int { maxBuffered.load(ordering: .relaxed) }
    /// The stream told the producer it ended (client gone, finished, aborted or shut down).
    var sawClose: Bool { closed.load(ordering: .relaxed) }
    /// Every byte was written and the stream finished.
    var didFinish: Bool { finished.load(ordering: .relaxed) }

    init(seed: Int, total: Int?, chunk: Int = 60_000, highWater: Int = 1 << 20) {
        source = PatternSource(seed: seed)
        self.total = total
        self.chunk = chunk
        self.highWater = highWater
    }

    func start(_ stream: ResponseStream) {
        stream.onClose { [self] in closed.store(true, ordering: .relaxed) }
        pump(stream)
    }

    private func pump(_ stream: ResponseStream) {
        while total.map({ sent < $0 }) ?? true {
            if stream.isClosed { return }
            if stream.bufferedByteCount >= highWater {
                stream.onDrain(threshold: highWater / 2) { [self] in pump(stream) }
                return
            }
            let count = min(chunk, (total ?? Int.max) - sent)
            stream.write(Array(source.slice(at: sent, count: count)))
            sent += count
            let buffered = stream.bufferedByteCount
            if buffered > maxBuffered.load(ordering: .relaxed) { maxBuffered.store(buffered, ordering: .relaxed) }
        }
        finished.store(true, ordering: .relaxed)
        stream.finish()
    }
}
