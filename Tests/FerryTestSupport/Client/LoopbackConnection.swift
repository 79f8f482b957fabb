import Foundation

/// A blocking HTTP/1.1 client connection to 127.0.0.1, for tests that must see exactly what an origin sends:
/// the bytes before a reset, a short body, a close-delimited body, a stall. Not thread-safe: one test uses it
/// at a time. Closed by `close()` or when released.
public final class LoopbackConnection {
    public let port: Int
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// Set when the peer closed or reset; reading stops there.
    private var ended: LoopbackResponse.Ending?

    /// Connects to 127.0.0.1:`port`; `timeout` bounds each wait for bytes.
    public init(port: Int, timeout: Double = 10) throws {
        self.port = port
        self.fd = try LoopbackSocket.connect(port: port, timeout: timeout)
    }

    deinit { close() }

    /// One request on a fresh connection, then close.
    public static func fetch(
        port: Int, _ target: String, method: String = "GET", headers: [(String, String)] = [], timeout: Double = 10
    ) throws -> LoopbackResponse {
        let connection = try LoopbackConnection(port: port, timeout: timeout)
        defer { connection.close() }
        return try connection.request(target, method: method, headers: headers)
    }

    /// Sends a request (with `Host`) and reads its response.
    public func request(_ target: String, method: String = "GET", headers: [(String, String)] = [])
        throws -> LoopbackResponse
    {
        let started = Date()
        try send(target, method: method, headers: headers)
        var response = try readResponse(method: method)
        response.elapsed = Date().timeIntervalSince(started)
        return response
    }

    /// Writes the request head (no body).
    public func send(_ target: String, method: String = "GET", headers: [(String, String)] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        try writeAll(Array(head.utf8))
    }

    /// Writes raw bytes (e.g. a malformed request).
    public func writeAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FixtureError.lastSystemCall("send", "127.0.0.1:\(port)")
            }
            offset += n
        }
    }

    /// Reads one response. Throws when the head cannot be read; a body cut short is reported in `ending`.
    public func readResponse(method: String = "GET") throws -> LoopbackResponse {
        let started = Date()
        let head = try readHead()
        var response = try Self.parseHead(head)
        let noBody = method == "HEAD" || response.status / 100 == 1 || response.status == 204
            || response.status == 304
        if noBody {
            response.ending = .complete
        } else if response.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            (response.body, response.ending) = readChunked()
        } else if let lengthText = response.header("Content-Length"), let length = Int(lengthText) {
            (response.body, response.ending) = readExactly(length)
        } else {
            (response.body, response.ending) = readToEnd()
        }
        response.elapsed = Date().timeIntervalSince(started)
        return response
    }

    /// Closes the connection (idempotent).
    public func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    // MARK: - Reading

    /// Receives more bytes into `buffer`; false at EOF, reset or timeout (recorded in `ended`).
    private func fill() -> Bool {
        if ended != nil { return false }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n > 0 {
                buffer += chunk[0..<n]
                return true
            }
            if n == 0 {
                ended = .closedEarly
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                ended = .timedOut
            } else {
                ended = .reset
            }
            return false
        }
    }

    private func readHead() throws -> [UInt8] {
        let terminator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let range = buffer.firstRange(of: terminator) {
                let head = Array(buffer[..<range.lowerBound])
                buffer.removeSubrange(..<range.upperBound)
                return head
            }
            if !fill() {
                throw FixtureError.malformedResponse(
                    "connection ended (\(ended.map { "\($0)" } ?? "?")) before the end of the head; "
                        + "got \(buffer.count) bytes")
            }
        }
    }

    private func readExactly(_ length: Int) -> ([UInt8], LoopbackResponse.Ending) {
        while buffer.count < length {
            if !fill() {
                let body = buffer
                buffer = []
                return (body, ended ?? .closedEarly)
            }
        }
        let body = Array(buffer[..<length])
        buffer.removeSubrange(..<length)
        return (body, .complete)
    }

    private func readToEnd() -> ([UInt8], LoopbackResponse.Ending) {
        while fill() {}
        let body = buffer
        buffer = []
        return (body, ended == .closedEarly ? .complete : ended ?? .complete)
    }

    private func readLine() -> String? {
        while true {
            if let range = buffer.firstRange(of: [13, 10]) {
                let line = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<range.upperBound)
                return line
            }
            if !fill() { return nil }
        }
    }

    private func readChunked() -> ([UInt8], LoopbackResponse.Ending) {
        var body: [UInt8] = []
        while true {
            guard let sizeLine = readLine() else { return (body, ended ?? .closedEarly) }
            let sizeText = sizeLine.split(separator: ";").first.map(String.init) ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else {
                return (body, .closedEarly)
            }
            if size == 0 {
                while let trailer = readLine(), !trailer.isEmpty {}
                return (body, .complete)
            }
            let (chunk, ending) = readExactly(size)
            body += chunk
            if ending != .complete { return (body, ending) }
            _ = readLine()
        }
    }

    static func parseHead(_ head: [UInt8]) throws -> LoopbackResponse {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw FixtureError.malformedResponse("status line \(lines[0].debugDescription)")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw FixtureError.malformedResponse("header line \(line.debugDescription)")
            }
            headers.append((
                String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            ))
        }
        return LoopbackResponse(
            status: status, reason: statusParts.count > 2 ? String(statusParts[2]) : "", headers: headers,
            body: [], ending: .complete, elapsed: 0)
    }
}
