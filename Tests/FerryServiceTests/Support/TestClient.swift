import FerryTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small blocking HTTP/1.1 client over a real socket, for end-to-end tests of the service:
/// one request per connection (or several on one with `Connection`), Content-Length, chunked and
/// close-delimited bodies, and a Server-Sent Events reader.
struct TestResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestClientError.protocolError("body is not a JSON object: \(text.prefix(200))")
        }
        return object
    }

    func jsonArray() throws -> [[String: Any]] {
        guard let array = try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]] else {
            throw TestClientError.protocolError("body is not a JSON array: \(text.prefix(200))")
        }
        return array
    }
}

enum TestClientError: Error, CustomStringConvertible {
    case connect(Int32)
    case timeout(String)
    case closed(String)
    case protocolError(String)

    var description: String {
        switch self {
        case .connect(let e): "connect failed: errno \(e)"
        case .timeout(let what): "timed out: \(what)"
        case .closed(let what): "connection closed: \(what)"
        case .protocolError(let what): "protocol error: \(what)"
        }
    }
}

/// One TCP connection to 127.0.0.1 with a receive timeout.
final class TestConnection {
    /// Closed only by `deinit`: a throwing init still runs it, so closing before a throw as well
    /// closed the number twice (the second time, whatever another test had opened under it).
    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, timeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw TestClientError.connect(errno) }
        setTimeout(timeout)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }  // a signal (a debugger attaching, say) is no closed connection
            guard n > 0 else { throw TestClientError.closed(n < 0 ? "send errno \(errno)" : "send") }
            offset += n
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads more bytes into the buffer; false at end of stream.
    @discardableResult
    func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        var n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        while n < 0, errno == EINTR {  // a signal (a debugger attaching, say) is no closed connection
            n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK { throw TestClientError.timeout("recv") }
            throw TestClientError.closed("recv errno \(errno)")
        }
        if n == 0 { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<index])
                buffer.removeSubrange(...index)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw TestClientError.closed("in a line") }
        }
    }

    func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw TestClientError.closed("body ended after \(buffer.count) of \(count) bytes") }
        }
        let out = Array(buffer[..<count])
        buffer.removeSubrange(..<count)
        return out
    }

    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { buffer.removeAll() }
        return buffer
    }

    /// Reads one response; `head` true for HEAD (no body).
    func readResponse(head: Bool = false) throws -> TestResponse {
        var statusLine = try readLine()
        var status = 0
        var headers: [(String, String)] = []
        repeat {
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, let code = Int(parts[1]) else { throw TestClientError.protocolError("status line '\(statusLine)'") }
            status = code
            headers = []
            while true {
                let line = try readLine()
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: ":") else { throw TestClientError.protocolError("header '\(line)'") }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            if status == 100 { statusLine = try readLine() }
        } while status == 100
        let response = TestResponse(status: status, headers: headers, body: [])
        if head || status == 204 || status == 304 { return response }
        var body: [UInt8] = []
        if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw TestClientError.protocolError("chunk size '\(sizeLine)'") }
                if size == 0 {
                    while try !readLine().isEmpty {}
                    break
                }
                body += try readExactly(size)
                _ = try readLine()
            }
        } else if let length = response.header("Content-Length").flatMap(Int.init) {
            body = try readExactly(length)
        } else {
            body = try readToEnd()
        }
        return TestResponse(status: status, headers: headers, body: body)
    }

    static func requestBytes(_ method: String, _ path: String, port: Int, headers: [String: String], body: [UInt8]?) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        if let body {
            if headers.keys.contains(where: { $0.lowercased() == "content-type" }) == false {
                text += "Content-Type: application/json\r\n"
            }
            text += "Content-Length: \(body.count)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8) + (body ?? [])
    }
}

/// Requests to one Ferry instance. Every call is `async` and does its socket work off the
/// concurrency pool (`offThePool`).
struct TestClient: Sendable {
    let port: Int
    var token: String?

    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                 timeout: Double = 15) async throws -> TestResponse {
        var all = headers
        if let token, all["Authorization"] == nil { all["Authorization"] = "Bearer \(token)" }
        all["Connection"] = "close"
        let bytes = TestConnection.requestBytes(method, path, port: port, headers: all, body: body)
        let port = self.port
        return try await offThePool {
            let connection = try TestConnection(port: port, timeout: timeout)
            try connection.send(bytes)
            return try connection.readResponse(head: method == "HEAD")
        }
    }

    func json(_ method: String, _ path: String, _ object: Any, headers: [String: String] = [:]) async throws -> TestResponse {
        let data = try JSONSerialization.data(withJSONObject: object)
        return try await request(method, path, headers: headers, body: Array(data))
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> TestResponse {
        try await request("GET", path, headers: headers)
    }

    /// Opens an event stream and returns a reader positioned after the response head.
    func events(_ path: String, headers: [String: String] = [:]) async throws -> EventReader {
        var all = headers
        if let token, all["Authorization"] == nil { all["Authorization"] = "Bearer \(token)" }
        let bytes = TestConnection.requestBytes("GET", path, port: port, headers: all, body: nil)
        let port = self.port
        return try await offThePool {
            let connection = try TestConnection(port: port, timeout: 20)
            try connection.send(bytes)
            return try EventReader(connection)
        }
    }

    /// Polls a job every 50 ms until `condition` holds or `timeout` passes; returns the last job seen. Past the
    /// deadline it still polls until it has polled 10 times (`pollUntilAsync`), so a test process starved on a
    /// loaded machine is not taken for a job that never got there. A `finished` job matches once its `sha256` is
    /// known (API.md: it may follow `finished` by a moment, with a `job` event).
    @discardableResult
    func waitForJob(_ id: String, timeout: Double = 30, _ condition: ([String: Any]) -> Bool) async throws -> [String: Any] {
        var last: [String: Any] = [:]
        let matched = try await pollUntilAsync(timeout: timeout, interval: 0.05, minimumChecks: 10) { () -> [String: Any]? in
            last = try await get("/api/v1/jobs/\(id)").json()
            let digestToCome = last["state"] as? String == "finished" && last["sha256"] is NSNull
            return condition(last) && !digestToCome ? last : nil
        }
        if let matched { return matched }
        throw TestClientError.timeout("job \(id) never matched; last: \(last)")
    }
}

/// One parsed Server-Sent Event.
struct SSEvent: Sendable {
    var id: String?
    var event: String
    var data: String

    func json() throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] else {
            throw TestClientError.protocolError("event data is not an object: \(data)")
        }
        return object
    }
}

/// Reads events from a chunked `text/event-stream` response. Used by one test at a time; its reads
/// run off the concurrency pool.
final class EventReader: @unchecked Sendable {
    let connection: TestConnection
    let status: Int
    let headers: [(String, String)]
    private var pending: [UInt8] = []
    private(set) var comments: [String] = []
    private(set) var retry: Int?
    private var ended = false

    init(_ connection: TestConnection) throws {
        self.connection = connection
        var status = 0
        var headers: [(String, String)] = []
        let line = try connection.readLine()
        status = Int(line.split(separator: " ")[1]) ?? 0
        while true {
            let header = try connection.readLine()
            if header.isEmpty { break }
            if let colon = header.firstIndex(of: ":") {
                headers.append((String(header[..<colon]), header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
        }
        self.status = status
        self.headers = headers
    }

    /// The next event, or nil when the stream ended.
    func next(timeout: Double = 20) async throws -> SSEvent? {
        try await offThePool { try self.nextBlocking(timeout: timeout) }
    }

    private func nextBlocking(timeout: Double) throws -> SSEvent? {
        connection.setTimeout(timeout)
        var id: String?
        var name = "message"
        var data: [String] = []
        while true {
            guard let line = try nextLine() else { return nil }
            if line.isEmpty {
                if data.isEmpty && id == nil && name == "message" { continue }
                return SSEvent(id: id, event: name, data: data.joined(separator: "\n"))
            }
            if line.hasPrefix(":") { comments.append(String(line.dropFirst())); continue }
            let (field, value) = Self.split(line)
            switch field {
            case "id": id = value
            case "event": name = value
            case "data": data.append(value)
            case "retry": retry = Int(value)
            default: break
            }
        }
    }

    /// Events until `stop` returns true for one (inclusive), or the stream ends.
    func collect(timeout: Double = 30, until stop: (SSEvent) -> Bool) async throws -> [SSEvent] {
        var events: [SSEvent] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let event = try await next(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { return events }
            events.append(event)
            if stop(event) { return events }
        }
        throw TestClientError.timeout("events; got \(events.map { "\($0.event) \($0.data.prefix(80))" })")
    }

    private static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }

    /// One line of the event stream, de-chunking as needed.
    private func nextLine() throws -> String? {
        while true {
            if let index = pending.firstIndex(of: 0x0A) {
                var line = Array(pending[..<index])
                pending.removeSubrange(...index)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            if ended { return nil }
            let sizeLine = try connection.readLine()
            guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else {
                throw TestClientError.protocolError("chunk size '\(sizeLine)'")
            }
            if size == 0 { ended = true; continue }
            pending += try connection.readExactly(size)
            _ = try connection.readLine()
        }
    }
}
