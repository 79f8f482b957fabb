#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An incremental HTTP/1.1 request parser: append bytes as they arrive, then call `next()` until it returns nil.
///
/// A pure value type (no I/O, no Foundation), owned by whoever holds it (a connection's queue). Feeding the same bytes
/// in any split yields the same events. Decisions (RFC 9112, strict where the RFC allows a choice):
/// - Lines end with CRLF. A bare LF or a bare CR anywhere in the head is rejected (400): lenient line endings are a
///   request-smuggling vector when a proxy in front parses differently.
/// - Up to two empty lines before a request line are skipped (RFC 9112 2.2).
/// - Obsolete line folding, whitespace before the colon, control characters in values: 400.
/// - `Transfer-Encoding` together with `Content-Length`, differing or malformed lengths: 400. A coding other than a
///   single final `chunked`: 501. `Transfer-Encoding` in an HTTP/1.0 request: 400.
/// - HTTP/1.1 requests need exactly one `Host` field.
/// - Chunk extensions are accepted and ignored; trailer fields are validated and ignored.
public struct RequestParser: Sendable {
    public enum Event: Sendable, Equatable {
        /// A complete request head. Its body follows as one `.end`.
        case head(RequestHead)
        /// The request's complete body (empty when it has none); the parser is ready for the next request.
        case end(body: [UInt8])
        /// The request was rejected; the parser accepts nothing more.
        case error(RequestParseError)
    }

    private enum State: Sendable, Equatable {
        case requestLine
        case headers
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case failed
    }

    /// Longest chunk-size line (size and extensions).
    static let maxChunkLine = 4096

    public let limits: RequestLimits
    public let maxBodySize: Int

    private var buffer: [UInt8] = []
    private var position = 0
    /// Absolute index from which to continue looking for LF in the current line.
    private var scanFrom = 0
    private var state: State = .requestLine
    private var emptyLinesSkipped = 0

    private var head = RequestHead(method: .GET, target: "", version: .http1_1, headers: HTTPHeaders(),
                                   keepAlive: true, expectsContinue: false, framing: .none)
    private var headerBytes = 0
    private var body: [UInt8] = []

    public init(limits: RequestLimits = RequestLimits(), maxBodySize: Int = 1 << 20) {
        self.limits = limits
        self.maxBodySize = maxBodySize
    }

    /// Bytes received and not consumed yet.
    public var bufferedByteCount: Int { buffer.count - position }

    /// Hands over the bytes received beyond the last request (a connection that switched protocols reads them as
    /// the other protocol's).
    mutating func takeBuffered() -> [UInt8] {
        defer {
            buffer.removeAll()
            position = 0
            scanFrom = 0
        }
        return Array(buffer[position...])
    }

    /// True while a request head is being received (some bytes of it arrived, the header block has not ended).
    public var isReadingHead: Bool {
        switch state {
        case .requestLine: return position < buffer.count
        case .headers: return true
        default: return false
        }
    }

    /// True while a request body is being received.
    public var isReadingBody: Bool {
        switch state {
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers: return true
        default: return false
        }
    }

    public var hasFailed: Bool { state == .failed }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard state != .failed, !bytes.isEmpty else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    private mutating func compact() {
        if position == buffer.count {
            if buffer.capacity > 64 * 1024 { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            scanFrom = 0
            position = 0
        } else if position >= 4096 && position * 2 >= buffer.count {
            buffer.removeSubrange(0..<position)
            scanFrom -= position
            position = 0
        }
    }

    /// The next event the buffered bytes allow, or nil when more bytes are needed (or after an error).
    public mutating func next() -> Event? {
        while true {
            switch state {
            case .failed:
                return nil
            case .requestLine:
                guard let lf = findLineFeed() else {
                    if buffer.count - position > limits.requestLine + 1 {
                        return fail(.uriTooLong, "request line longer than \(limits.requestLine) bytes")
                    }
                    return nil
                }
                let start = position
                position = lf + 1
                guard lf > start, buffer[lf - 1] == ASCII.cr else { return fail(.badRequest, "bare LF in request line") }
                let end = lf - 1
                if end == start {
                    emptyLinesSkipped += 1
                    if emptyLinesSkipped > 2 { return fail(.badRequest, "empty lines before the request line") }
                    continue
                }
                if end - start > limits.requestLine {
                    return fail(.uriTooLong, "request line longer than \(limits.requestLine) bytes")
                }
                let parsed = buffer.withUnsafeBufferPointer { RequestSyntax.requestLine(UnsafeBufferPointer(rebasing: $0[start..<end])) }
                switch parsed {
                case .failure(let error): return fail(error)
                case .success(let line):
                    head = RequestHead(method: line.method, target: line.target, version: line.version,
                                       headers: HTTPHeaders(), keepAlive: true, expectsContinue: false, framing: .none)
                    headerBytes = 0
                    state = .headers
                }
            case .headers, .trailers:
                let isTrailer = state == .trailers
                guard let lf = findLineFeed() else {
                    if headerBytes + (buffer.count - position) > limits.headerBlock {
                        return fail(.headerFieldsTooLarge, "header block larger than \(limits.headerBlock) bytes")
                    }
                    return nil
                }
                let start = position
                position = lf + 1
                headerBytes += lf + 1 - start
                if headerBytes > limits.headerBlock {
                    return fail(.headerFieldsTooLarge, "header block larger than \(limits.headerBlock) bytes")
                }
                guard lf > start, buffer[lf - 1] == ASCII.cr else { return fail(.badRequest, "bare LF in header block") }
                let end = lf - 1
                if end == start {
                    if isTrailer { return complete() }
                    if let error = RequestFraming.apply(to: &head, maxBodySize: maxBodySize) { return fail(error) }
                    state = head.framing == .chunked ? .chunkSize : .body(remaining: lengthOf(head.framing))
                    if case .length(let n) = head.framing { body.reserveCapacity(n) }
                    return .head(head)
                }
                let parsed = buffer.withUnsafeBufferPointer { RequestSyntax.field(UnsafeBufferPointer(rebasing: $0[start..<end])) }
                switch parsed {
                case .failure(let error): return fail(error)
                case .success(let field):
                    if isTrailer { continue }
                    if head.headers.count >= limits.headerCount {
                        return fail(.headerFieldsTooLarge, "more than \(limits.headerCount) header fields")
                    }
                    head.headers.add(field.name, field.value)
                }
            case .body(let remaining):
                if remaining == 0 { return complete() }
                let take = min(remaining, buffer.count - position)
                if take == 0 { return nil }
                body.append(contentsOf: buffer[position..<position + take])
                position += take
                scanFrom = position
                state = .body(remaining: remaining - take)
            case .chunkSize:
                guard let lf = findLineFeed() else {
                    if buffer.count - position > Self.maxChunkLine { return fail(.badRequest, "chunk size line too long") }
                    return nil
                }
                let start = position
                position = lf + 1
                guard lf > start, buffer[lf - 1] == ASCII.cr else { return fail(.badRequest, "bare LF after chunk size") }
                if lf - start > Self.maxChunkLine { return fail(.badRequest, "chunk size line too long") }
                let end = lf - 1
                let parsed = buffer.withUnsafeBufferPointer { RequestSyntax.chunkSize(UnsafeBufferPointer(rebasing: $0[start..<end])) }
                guard let size = parsed else { return fail(.badRequest, "invalid chunk size") }
                if size == 0 {
                    headerBytes = 0
                    state = .trailers
                } else {
                    if size > maxBodySize - body.count {
                        return fail(.payloadTooLarge, "request body larger than \(maxBodySize) bytes")
                    }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let take = min(remaining, buffer.count - position)
                if take == 0 { return nil }
                body.append(contentsOf: buffer[position..<position + take])
                position += take
                scanFrom = position
                state = remaining == take ? .chunkDataEnd : .chunkData(remaining: remaining - take)
            case .chunkDataEnd:
                let available = buffer.count - position
                if available >= 1 && buffer[position] != ASCII.cr { return fail(.badRequest, "chunk data not followed by CRLF") }
                if available < 2 { return nil }
                if buffer[position + 1] != ASCII.lf { return fail(.badRequest, "chunk data not followed by CRLF") }
                position += 2
                scanFrom = position
                state = .chunkSize
            }
        }
    }

    private func lengthOf(_ framing: BodyFraming) -> Int {
        if case .length(let n) = framing { return n }
        return 0
    }

    private mutating func complete() -> Event {
        let finished = body
        body = []
        head.headers = HTTPHeaders()
        headerBytes = 0
        emptyLinesSkipped = 0
        state = .requestLine
        return .end(body: finished)
    }

    private mutating func fail(_ kind: RequestParseError.Kind, _ message: String) -> Event {
        fail(RequestParseError(kind, message))
    }

    private mutating func fail(_ error: RequestParseError) -> Event {
        state = .failed
        buffer = []
        body = []
        position = 0
        scanFrom = 0
        return .error(error)
    }

    /// Index of the next LF at or after the current position, remembering how far it looked.
    private mutating func findLineFeed() -> Int? {
        let from = max(scanFrom, position)
        let count = buffer.count
        guard from < count else { scanFrom = count; return nil }
        let found: Int? = buffer.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, let hit = memchr(base + from, Int32(ASCII.lf), count - from) else { return nil }
            return base.distance(to: UnsafeRawPointer(hit))
        }
        if let found {
            scanFrom = found + 1
            return found
        }
        scanFrom = count
        return nil
    }
}
