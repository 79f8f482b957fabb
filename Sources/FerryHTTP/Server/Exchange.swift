import Dispatch

/// One request and its response on a connection, from the end of its head to the last byte of its response.
/// Confined to the connection's queue.
final class Exchange: @unchecked Sendable {
    let method: HTTPMethod
    /// The request-target as received (the access log prints it without the query).
    let target: String
    let version: HTTPVersion
    let keepAlive: Bool
    let startedAt: DispatchTime
    /// `Expect: 100-continue` and no body byte seen yet: send the interim response before reading the body.
    var wantsContinue: Bool
    /// The request was rejected or timed out: close the connection after this response.
    var closeAfter = false
    /// Set when the handler returns (or for errors); written once every earlier exchange is written.
    var response: HTTPResponse?
    var bodyBytesSent: Int64 = 0
    var status = 0

    init(method: HTTPMethod, target: String, version: HTTPVersion, keepAlive: Bool, wantsContinue: Bool) {
        self.method = method
        self.target = target
        self.version = version
        self.keepAlive = keepAlive
        self.wantsContinue = wantsContinue
        self.startedAt = .now()
    }

    /// An exchange for a request that could not even be parsed.
    static func rejected(_ response: HTTPResponse) -> Exchange {
        let exchange = Exchange(method: HTTPMethod("-"), target: "-", version: .http1_1, keepAlive: false, wantsContinue: false)
        exchange.response = response
        exchange.closeAfter = true
        return exchange
    }
}
