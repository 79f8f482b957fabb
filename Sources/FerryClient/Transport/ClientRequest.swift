/// One request to Ferry's API, before it goes on the wire. Pure value.
public struct ClientRequest: Sendable, Equatable {
    /// How long the client is willing to wait, by kind of exchange.
    public enum Patience: Sendable, Equatable {
        /// An API call: answered within a minute.
        case call
        /// An event stream: open for as long as it is wanted; silent for 45 s (pings come every 15 s) means dead.
        case stream
        /// A file download: as long as bytes keep coming; 60 s without any means stalled.
        case transfer
        /// A health probe: connected and answered within `seconds` in all, or given up.
        case probe(seconds: Double)
    }

    public var method: String
    /// Path and query, already percent-encoded: `/api/v1/jobs?state=failed`.
    public var target: String
    public var headers: [Header]
    public var body: [UInt8]?
    public var patience: Patience

    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(_ method: String, _ target: String, headers: [Header] = [], body: [UInt8]? = nil,
                patience: Patience = .call) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.patience = patience
    }

    /// A JSON body: sets `Content-Type: application/json`, which Ferry requires of every request body.
    public static func json(_ method: String, _ target: String, _ body: [UInt8]) -> ClientRequest {
        ClientRequest(method, target, headers: [Header("Content-Type", "application/json")], body: body)
    }
}

/// The status line and headers of a response.
public struct ResponseHead: Sendable, Equatable {
    public var status: Int
    public var headers: [ClientRequest.Header]

    public init(status: Int, headers: [ClientRequest.Header]) {
        self.status = status
        self.headers = headers
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }
}

/// A whole response, body collected.
public struct ClientResponse: Sendable {
    public var head: ResponseHead
    public var body: [UInt8]
    public var status: Int { head.status }
}

/// Whether a streaming reader wants more.
public enum StreamDecision: Sendable, Equatable {
    case `continue`
    case stop
}

/// How a streamed response ended.
public enum StreamEnd: Sendable, Equatable {
    /// The server ended the body (or the connection).
    case completed
    /// The reader said `.stop`.
    case stopped
}

/// Percent-encoding for the pieces of a request target. Pure.
public enum TargetEncoding {
    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    /// One path segment (a job id): everything but unreserved characters is encoded, "/" included.
    public static func segment(_ text: String) -> String { encode(text, keeping: []) }

    /// One query value: like a segment, but "," stays readable (`state=failed,paused`).
    public static func queryValue(_ text: String) -> String { encode(text, keeping: [UInt8(ascii: ",")]) }

    /// `?name=value&…` for the pairs whose value is not nil; "" when none is.
    public static func query(_ pairs: [(String, String?)]) -> String {
        let parts = pairs.compactMap { name, value in value.map { "\(name)=\(queryValue($0))" } }
        return parts.isEmpty ? "" : "?" + parts.joined(separator: "&")
    }

    private static func encode(_ text: String, keeping extra: Set<UInt8>) -> String {
        var out = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) || extra.contains(byte) {
                out.append(Character(Unicode.Scalar(byte)))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (byte < 16 ? "0" + hex : hex)
            }
        }
        return out
    }
}
