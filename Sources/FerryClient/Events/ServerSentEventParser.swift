/// Turns the bytes of a `text/event-stream` into events, however the bytes are split into chunks.
///
/// Follows the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at
/// the start of the next are one line break); a line starting with ":" is a comment; `field: value` loses one
/// space after the colon; an empty line dispatches the event, unless it had no `data:` line; unknown fields are
/// ignored; a leading byte-order mark is skipped. Pure value: feed it bytes, get events.
public struct ServerSentEventParser: Sendable {
    /// The last `retry:` the stream asked for, in milliseconds.
    public private(set) var retryMilliseconds: Int?
    /// The last `id:` seen (it persists across events, as `Last-Event-ID` does).
    public private(set) var lastEventID: String?
    /// Comment lines seen (without the colon), e.g. " ping"; kept as a count only.
    public private(set) var commentCount = 0

    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var id: String?
    private var name = ""
    private var data: [String] = []
    private var hasData = false

    public init() {}

    /// Parses `bytes` and returns the events they completed, in order.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A:
                if let event = endLine() { events.append(event) }
            case 0x0D:
                afterCR = true
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        var bytes = line
        line.removeAll(keepingCapacity: true)
        if atStart {
            atStart = false
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        }
        if bytes.isEmpty { return dispatch() }
        if bytes.first == UInt8(ascii: ":") {
            commentCount += 1
            return nil
        }
        let field: String
        var value: String
        if let colon = bytes.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: bytes[..<colon], as: UTF8.self)
            var start = colon + 1
            if start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
            value = String(decoding: bytes[start...], as: UTF8.self)
        } else {
            field = String(decoding: bytes, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event":
            name = value
        case "data":
            data.append(value)
            hasData = true
        case "id":
            if !value.utf8.contains(0) {
                id = value
                lastEventID = value
            }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let milliseconds = Int(value) {
                retryMilliseconds = milliseconds
            }
        default:
            value = ""
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            id = nil
            name = ""
            data.removeAll()
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(id: id, event: name.isEmpty ? "message" : name, data: data.joined(separator: "\n"))
    }
}
