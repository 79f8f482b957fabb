/// A WebSocket close status code (RFC 6455, section 7.4); thrown as the reason a connection must close.
public struct WebSocketCloseCode: RawRepresentable, Equatable, Sendable, Error {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = WebSocketCloseCode(rawValue: 1000)
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    public static let invalidData = WebSocketCloseCode(rawValue: 1007)
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)

    /// Whether a peer may put `code` in a close frame: 1000-1003, 1007-1011 and 3000-4999 (1004-1006, 1015 and the
    /// rest of 1000-2999 are reserved or never sent).
    public static func mayBeSent(_ code: UInt16) -> Bool {
        (1000...1003).contains(code) || (1007...1011).contains(code) || (3000...4999).contains(code)
    }
}
