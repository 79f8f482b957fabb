/// One HTTP response as a `LoopbackConnection` received it, including how the body ended.
public struct LoopbackResponse: Sendable {
    /// How the body ended.
    public enum Ending: Sendable, Equatable {
        /// Every byte the framing promised arrived (Content-Length, last chunk, or EOF for a close-delimited body).
        case complete
        /// The peer closed the connection (FIN) before the promised bytes arrived.
        case closedEarly
        /// The peer reset the connection (ECONNRESET) before the promised bytes arrived.
        case reset
        /// No byte arrived within the connection's timeout.
        case timedOut
    }

    public var status: Int
    public var reason: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var ending: Ending
    /// Seconds from sending the request to the end of the body.
    public var elapsed: Double

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}
