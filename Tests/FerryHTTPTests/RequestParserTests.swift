import Testing
@testable import FerryHTTP

/// Feeds `text` all at once and collects events until the parser needs more.
func parseAll(_ text: String, maxBody: Int = 1 << 20, limits: RequestLimits = RequestLimits()) -> [RequestParser.Event] {
    parseAll(Array(text.utf8), maxBody: maxBody, limits: limits)
}

func parseAll(_ bytes: [UInt8], maxBody: Int = 1 << 20, limits: RequestLimits = RequestLimits()) -> [RequestParser.Event] {
    var parser = RequestParser(limits: limits, maxBodySize: maxBody)
    parser.append(bytes)
    var events: [RequestParser.Event] = []
    while let event = parser.next() { events.append(event) }
    return events
}

/// Feeds `bytes` one at a time, draining events after each byte.
func parseBytewise(_ bytes: [UInt8], maxBody: Int = 1 << 20) -> [RequestParser.Event] {
    var parser = RequestParser(maxBodySize: maxBody)
    var events: [RequestParser.Event] = []
    for byte in bytes {
        parser.append([byte])
        while let event = parser.next() { events.append(event) }
    }
    return events
}

func firstError(_ text: String, maxBody: Int = 1 << 20) -> RequestParseError? {
    for event in parseAll(text, maxBody: maxBody) { if case .error(let error) = event { return error } }
    return nil
}

func status(_ text: String, maxBody: Int = 1 << 20) -> Int? { firstError(text, maxBody: maxBody)?.statusCode }

func heads(_ events: [RequestParser.Event]) -> [RequestHead] {
    events.compactMap { if case .head(let head) = $0 { return head } else { return nil } }
}

func bodies(_ events: [RequestParser.Event]) -> [[UInt8]] {
    events.compactMap { if case .end(let body) = $0 { return body } else { return nil } }
}

@Suite struct RequestParserTests {
    @Test func simpleGet() throws {
        let events = parseAll("GET /a/b?x=1 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n")
        #expect(events.count == 2)
        let head = try #require(heads(events).first)
        #expect(head.method == .GET)
        #expect(head.target == "/a/b?x=1")
        #expect(head.version == .http1_1)
        #expect(head.headers["host"] == "h")
        #expect(head.headers["ACCEPT"] == "*/*")
        #expect(head.keepAlive)
        #expect(head.framing == .none)
        #expect(bodies(events) == [[]])
    }

    @Test func headerOrderAndDuplicatesKept() throws {
        let head = try #require(heads(parseAll("GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\nx-a: 2\r\nX-B:  spaced value \t\r\n\r\n")).first)
        #expect(head.headers.values("X-A") == ["1", "2"])
        #expect(head.headers["x-b"] == "spaced value")
        #expect(Array(head.headers.map(\.name)) == ["Host", "X-A", "x-a", "X-B"])
    }

    @Test func contentLengthBody() {
        let events = parseAll("POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello")
        #expect(heads(events).first?.framing == .length(5))
        #expect(bodies(events) == [Array("hello".utf8)])
    }

    @Test func chunkedBodyWithExtensionsAndTrailers() {
        let text = "POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n6 ; x\r\n world\r\n0\r\nTrailer-A: 1\r\nTrailer-B: 2\r\n\r\n"
        let events = parseAll(text)
        #expect(heads(events).first?.framing == .chunked)
        #expect(bodies(events) == [Array("hello world".utf8)])
        #expect(!heads(events)[0].headers.contains("Trailer-A"))
    }

    @Test func pipelinedRequestsInOrder() {
        let text = "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nPOST /2 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcGET /3 HTTP/1.1\r\nHost: h\r\n\r\n"
        let events = parseAll(text)
        #expect(heads(events).map(\.target) == ["/1", "/2", "/3"])
        #expect(bodies(events) == [[], Array("abc".utf8), []])
    }

    @Test(arguments: [
        "GET / HTTP/1.1\r\nHost: h\r\n\r\n",
        "POST /upload?x=y HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\nX: y\r\n\r\nhello world",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n10;e=1\r\n0123456789abcdef\r\n0\r\nT: x\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n",
        "\r\nGET / HTTP/1.0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nBad Header: x\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY",
    ])
    func bytewiseEqualsAllAtOnce(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(parseBytewise(bytes) == parseAll(bytes))
    }

    @Test func keepAliveRules() {
        #expect(heads(parseAll("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"))[0].keepAlive == false)
        #expect(heads(parseAll("GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, CLOSE\r\n\r\n"))[0].keepAlive == false)
        #expect(heads(parseAll("GET / HTTP/1.0\r\n\r\n"))[0].keepAlive == false)
        #expect(heads(parseAll("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"))[0].keepAlive == true)
        #expect(heads(parseAll("GET / HTTP/1.0\r\n\r\n"))[0].version == .http1_0)
    }

    @Test func expectContinue() {
        #expect(heads(parseAll("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"))[0].expectsContinue)
        #expect(heads(parseAll("GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\n\r\n"))[0].expectsContinue == false)
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 3\r\n\r\n") == 417)
        // HTTP/1.0 ignores Expect.
        #expect(heads(parseAll("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx"))[0].expectsContinue == false)
    }

    // MARK: - Limits

    @Test func requestLineLimit() {
        let long = "GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: h\r\n\r\n"
        #expect(status(long) == 414)
        // Rejected before the line ends, too.
        #expect(status("GET /" + String(repeating: "a", count: 9000)) == 414)
        #expect(firstError("GET /" + String(repeating: "a", count: 8000) + " HTTP/1.1\r\nHost: h\r\n\r\n") == nil)
    }

    @Test func headerBlockLimit() {
        let value = String(repeating: "v", count: 1000)
        var text = "GET / HTTP/1.1\r\nHost: h\r\n"
        for i in 0..<70 { text += "X-\(i): \(value)\r\n" }
        #expect(status(text + "\r\n") == 431)
        #expect(status(text) == 431)  // without the end of the block
    }

    @Test func headerCountLimit() {
        var text = "GET / HTTP/1.1\r\nHost: h\r\n"
        for i in 0..<100 { text += "X-\(i): 1\r\n" }
        #expect(status(text + "\r\n") == 431)
        var fewer = "GET / HTTP/1.1\r\nHost: h\r\n"
        for i in 0..<99 { fewer += "X-\(i): 1\r\n" }
        #expect(firstError(fewer + "\r\n") == nil)
    }

    @Test func bodyLimit() {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", maxBody: 10) == 413)
        #expect(firstError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789", maxBody: 10) == nil)
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\n012345\r\n6\r\n012345\r\n", maxBody: 10) == 413)
        #expect(firstError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", maxBody: 10)?.code == "payload_too_large")
    }

    // MARK: - Rejections (400)

    @Test(arguments: [
        // request line
        "GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1 \r\nHost: h\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: h\r\n\r\n",
        " GET / HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET a HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET * HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /%4 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /\u{7F} HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /é HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/1.1x\r\nHost: h\r\n\r\n",
        "GET / HTTP/0.9\r\nHost: h\r\n\r\n",
        "GET / http/1.1\r\nHost: h\r\n\r\n",
        "GET / HTTP/11\r\nHost: h\r\n\r\n",
        "GET /\r\nHost: h\r\n\r\n",
        // line endings
        "GET / HTTP/1.1\nHost: h\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\n\n",
        "GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n",
        "GET /\r HTTP/1.1\r\nHost: h\r\n\r\n",
        "\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
        // fields
        "GET / HTTP/1.1\r\nHost: h\r\nX : y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX\t: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\n: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX(y): z\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX y: z\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\u{0}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\u{1}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\u{7F}b\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n continued\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tcontinued\r\n\r\n",
        "GET / HTTP/1.1\r\n Host: h\r\n\r\n",
        // Host
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        // lengths
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1.0\r\n\r\n",
        // chunked bodies
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;\u{1}\r\nabc\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer: x\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: x\n\r\n",
        // TE in HTTP/1.0
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ])
    func rejectedWith400(_ text: String) {
        let error = firstError(text)
        #expect(error?.statusCode == 400, "\(text.debugDescription): \(String(describing: error))")
        #expect(error?.code == "invalid_request")
    }

    @Test func versionNotSupported() {
        #expect(status("GET / HTTP/2.0\r\nHost: h\r\n\r\n") == 505)
        #expect(heads(parseAll("GET / HTTP/1.2\r\nHost: h\r\n\r\n")).first?.version == .http1_1)
    }

    @Test func acceptedForms() {
        #expect(firstError("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n") == nil)
        #expect(firstError("GET http://h/x?y HTTP/1.1\r\nHost: h\r\n\r\n") == nil)
        #expect(firstError("\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n") == nil)
        #expect(firstError("GET / HTTP/1.1\r\nHost: h\r\nX-Empty:\r\nX-Obs: caf\u{E9}\r\n\r\n") == nil)
        #expect(firstError("GET /%41%2f HTTP/1.1\r\nHost: h\r\n\r\n") == nil)
        let chunkLeadingZeros = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0005\r\nhello\r\n00\r\n\r\n"
        #expect(bodies(parseAll(chunkLeadingZeros)) == [Array("hello".utf8)])
    }

    @Test func parserStopsAfterError() {
        var parser = RequestParser()
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\nX : y\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        guard case .error = parser.next() else { Issue.record("expected an error"); return }
        #expect(parser.next() == nil)
        parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(parser.next() == nil)
        #expect(parser.hasFailed)
    }
}

/// Request smuggling classics: every ambiguous framing is refused, never guessed.
@Suite struct RequestSmugglingTests {
    @Test func clTE() {
        // CL.TE: a front end using Content-Length would forward "0\r\n\r\nG" as the body.
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG") == 400)
    }

    @Test func teCL() {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n") == 400)
    }

    @Test(arguments: [
        "Transfer-Encoding: xchunked",
        "Transfer-Encoding: chunked, identity",
        "Transfer-Encoding: identity",
        "Transfer-Encoding: gzip, chunked",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity",
        "Transfer-Encoding: chunked;q=1",
        "Transfer-Encoding: \"chunked\"",
    ])
    func teObfuscationsNotImplemented(_ field: String) {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\n\(field)\r\n\r\n0\r\n\r\n") == 501, "\(field)")
    }

    @Test(arguments: [
        "Transfer-Encoding : chunked",
        "Transfer-Encoding:\tchunked\r\n x",
        " Transfer-Encoding: chunked",
        "Transfer-Encoding: chunked, chunked",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding:",
        "Transfer-Encoding: chunked\rX: y",
        "Transfer-Encoding: chunked\nX: y",
    ])
    func teObfuscationsBadRequest(_ field: String) {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\n\(field)\r\n\r\n0\r\n\r\n") == 400, "\(field.debugDescription)")
    }

    @Test func teCaseInsensitive() {
        #expect(heads(parseAll("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n")).first?.framing == .chunked)
    }

    @Test func duplicateContentLength() {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd") == 400)
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\nabcd") == 400)
        // Identical values are the same message (RFC 9112 6.3).
        #expect(bodies(parseAll("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc")) == [Array("abc".utf8)])
        #expect(bodies(parseAll("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3,3\r\n\r\nabc")) == [Array("abc".utf8)])
    }

    @Test(arguments: ["+3", "3 3", "3a", " 3 ,", "0x3", "3.", "-0", "３"])
    func malformedContentLength(_ value: String) {
        #expect(status("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \(value)\r\n\r\nabc") == 400, "\(value)")
    }

    @Test func contentLengthWithSurroundingSpacesIsFine() {
        #expect(bodies(parseAll("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:   3  \r\n\r\nabc")) == [Array("abc".utf8)])
    }

    @Test func spaceBeforeColonIsNotTransferEncoding() {
        let error = firstError("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nTransfer-Encoding : chunked\r\n\r\nabcd")
        #expect(error?.statusCode == 400)
    }
}
