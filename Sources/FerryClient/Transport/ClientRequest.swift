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
