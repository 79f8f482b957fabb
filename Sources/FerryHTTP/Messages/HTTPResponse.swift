/// A response as returned by a handler. The server adds `Date`, `Connection` and the framing headers
/// (`Content-Length` / `Transfer-Encoding`), and omits the body for HEAD requests and 1xx/204/304 statuses.
/// A `Content-Length` set by the handler is kept only when the body is `.empty` (e.g. a HEAD or 304 built by hand).
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders
    public var body: ResponseBody

    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = [:], body: ResponseBody = .empty) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response: sets `Content-Type: application/json`.
    public static func json(_ status: HTTPStatus, _ data: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .bytes(data))
    }

    /// A plain-text response (`text/plain; charset=utf-8`).
    public static func text(_ status: HTTPStatus, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .bytes(Array(text.utf8)))
    }
}
