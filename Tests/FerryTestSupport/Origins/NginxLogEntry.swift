/// One line of an `NginxOrigin` access log.
public struct NginxLogEntry: Sendable, Equatable {
    public var method: String
    /// The normalised, decoded path (`$uri`), without the query.
    public var path: String
    /// The request target as sent (`$request_uri`), with the query.
    public var target: String
    public var status: Int
    /// The `Range` request header, nil when absent.
    public var range: String?
    /// The `If-Range` request header, nil when absent.
    public var ifRange: String?
    /// Body bytes nginx sent (`$body_bytes_sent`).
    public var bytesSent: Int64

    public init(
        method: String, path: String, target: String, status: Int, range: String?, ifRange: String?, bytesSent: Int64
    ) {
        self.method = method
        self.path = path
        self.target = target
        self.status = status
        self.range = range
        self.ifRange = ifRange
        self.bytesSent = bytesSent
    }

    /// Parses one line in the `NginxConfiguration.logFields` format; nil for anything else.
    public init?(line: String) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map { Self.unescape(String($0)) }
        guard fields.count == NginxConfiguration.logFields.count, let status = Int(fields[2]),
            let bytesSent = Int64(fields[5])
        else { return nil }
        self.init(
            method: fields[0], path: fields[1], target: fields[6], status: status,
            range: fields[3] == "-" ? nil : fields[3], ifRange: fields[4] == "-" ? nil : fields[4],
            bytesSent: bytesSent)
    }

    /// Undoes nginx's default log escaping (`\xHH`).
    static func unescape(_ text: String) -> String {
        guard text.contains("\\x") else { return text }
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count, utf8[index + 1] == UInt8(ascii: "x"),
                let value = UInt8(String(decoding: utf8[(index + 2)...(index + 3)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
