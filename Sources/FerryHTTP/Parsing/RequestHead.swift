/// A parsed request line and header block, with the framing decisions the parser took.
public struct RequestHead: Sendable, Equatable {
    public var method: HTTPMethod
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request that has a body.
    public var expectsContinue: Bool
    public var framing: BodyFraming
}
