/// How a request's body is framed and whether its connection stays open, decided from its head (RFC 9112 6.1-6.3:
/// `Host`, `Transfer-Encoding`, `Content-Length`, `Connection`, `Expect`). Pure; used by `RequestParser` once a
/// head is complete.
enum RequestFraming {
    /// Applies RFC 9112 6.1-6.3 to `head` (its framing, keep-alive and `100-continue`); nil when acceptable.
    static func apply(to head: inout RequestHead, maxBodySize: Int) -> RequestParseError? {
        let headers = head.headers
        let hosts = headers.values("host")
        if hosts.count > 1 { return RequestParseError(.badRequest, "more than one Host field") }
        if head.version == .http1_1 && hosts.isEmpty { return RequestParseError(.badRequest, "HTTP/1.1 request without Host") }

        let transferEncodings = headers.values("transfer-encoding")
        let contentLengths = headers.values("content-length")
        if !transferEncodings.isEmpty {
            if !contentLengths.isEmpty {
                return RequestParseError(.badRequest, "both Transfer-Encoding and Content-Length")
            }
            if head.version == .http1_0 {
                return RequestParseError(.badRequest, "Transfer-Encoding in an HTTP/1.0 request")
            }
            let codings = transferEncodings.flatMap { ASCII.listElements($0) }
            guard let last = codings.last else { return RequestParseError(.badRequest, "empty Transfer-Encoding") }
            guard ASCII.equalsIgnoringCase(String(last), "chunked") else {
                return RequestParseError(.notImplemented, "unsupported transfer coding; chunked must be the final one")
            }
            for coding in codings.dropLast() {
                if ASCII.equalsIgnoringCase(String(coding), "chunked") {
                    return RequestParseError(.badRequest, "chunked applied more than once")
                }
                return RequestParseError(.notImplemented, "unsupported transfer coding")
            }
            head.framing = .chunked
        } else if !contentLengths.isEmpty {
            var length: Int?
            for field in contentLengths {
                for element in field.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let value = RequestSyntax.length(ASCII.trimmingWhitespace(element)) else {
                        return RequestParseError(.badRequest, "invalid Content-Length")
                    }
                    if let length, length != value { return RequestParseError(.badRequest, "differing Content-Length values") }
                    length = value
                }
            }
            let value = length ?? 0
            if value > maxBodySize {
                return RequestParseError(.payloadTooLarge, "request body larger than \(maxBodySize) bytes")
            }
            head.framing = value == 0 ? .none : .length(value)
        } else {
            head.framing = .none
        }

        let connection = headers.listValues("connection")
        if head.version == .http1_1 {
            head.keepAlive = !connection.contains { ASCII.equalsIgnoringCase($0, "close") }
        } else {
            head.keepAlive = connection.contains { ASCII.equalsIgnoringCase($0, "keep-alive") }
                && !connection.contains { ASCII.equalsIgnoringCase($0, "close") }
        }

        let expectations = headers.listValues("expect")
        if head.version == .http1_1 && headers.contains("expect") {
            guard !expectations.isEmpty, expectations.allSatisfy({ ASCII.equalsIgnoringCase($0, "100-continue") }) else {
                return RequestParseError(.expectationFailed, "only 100-continue is supported in Expect")
            }
            head.expectsContinue = head.framing != .none
        }
        return nil
    }
}
