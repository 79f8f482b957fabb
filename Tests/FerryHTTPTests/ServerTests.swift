import Foundation
import Synchronization
import Testing
@testable import FerryHTTP
import FerryTestSupport

/// Live-server tests: a real `HTTPServer` on 127.0.0.1 port 0, driven by raw blocking clients on threads of their
/// own. Serialized (nested suites included): several tests measure latency or timeouts and must not compete with
/// each other for the two cores.
@Suite(.serialized) enum ServerTests {}

extension ServerTests {
    /// Framing, ordering and connection reuse: what a well-behaved client sees.
    @Suite struct Exchanges {
        @Test func pipelinedRequestsAreAnsweredInOrderEvenWhenHandlersFinishInReverse() async throws {
            // /a waits for /b to finish, /b for /c: the handlers finish c, b, a whatever the scheduling.
            let finished = Recorder()
            let afterB = Gate()
            let afterC = Gate()
            defer {
                afterB.open()
                afterC.open()
            }
            try await withServer(handler: { request in
                switch request.path {
                case "/a": await afterB.wait()
                case "/b": await afterC.wait()
                default: try? await Task.sleep(nanoseconds: 50_000_000)
                }
                finished.record(request.path)
                if request.path == "/c" { afterC.open() }
                if request.path == "/b" { afterB.open() }
                return .text(.ok, "body of \(request.path)")
            }) { _, port in
                let responses = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/a") + WireClient.request("/b") + WireClient.request("/c"))
                    return try (0..<3).map { _ in try client.readResponse() }
                }
                #expect(responses.map(\.text) == ["body of /a", "body of /b", "body of /c"])
                #expect(responses.allSatisfy { !$0.closes })
                #expect(finished.events == ["/c", "/b", "/a"])
            }
        }

        @Test func aLongPipelineWithBodiesPassesThePipelineCap() async throws {
            // 40 requests in one write: more than Connection.maxPipelinedRequests (16), so reading pauses and resumes.
            try await withServer(handler: { request in
                .text(.ok, "\(request.method.rawValue) \(request.path) \(String(decoding: request.body, as: UTF8.self))")
            }) { _, port in
                let responses = try await offThePool {
                    let client = try WireClient(port: port)
                    var batch = ""
                    for index in 0..<40 {
                        if index % 2 == 0 {
                            batch += WireClient.request("/\(index)")
                        } else {
                            let body = "payload-\(index)"
                            batch += "POST /\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                        }
                    }
                    try client.write(batch)
                    return try (0..<40).map { _ in try client.readResponse() }
                }
                let expected = (0..<40).map { $0 % 2 == 0 ? "GET /\($0) " : "POST /\($0) payload-\($0)" }
                #expect(responses.map(\.text) == expected)
            }
        }

        @Test func keepAliveConnectionsAreReused() async throws {
            try await withServer(handler: { request in .text(.ok, request.remoteAddress) }) { server, port in
                let (peers, openDuring) = try await offThePool {
                    let connection = try LoopbackConnection(port: port)
                    defer { connection.close() }
                    var peers: [String] = []
                    for _ in 0..<5 {
                        let response = try connection.request("/who")
                        guard response.status == 200, response.ending == .complete else {
                            throw WireError("status \(response.status), \(response.ending)")
                        }
                        peers.append(response.text)
                    }
                    return (peers, server.openConnectionCount)
                }
                #expect(peers.count == 5)
                #expect(Set(peers).count == 1, "every request came over the same connection: \(peers)")
                #expect(openDuring == 1)
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func expectContinueGetsAnInterimResponseBeforeTheBody() async throws {
            let calls = Recorder()
            try await withServer(handler: { request in
                calls.record(request.path)
                return .text(.ok, "got \(request.body.count): \(String(decoding: request.body, as: UTF8.self))")
            }) { _, port in
                let (interim, response, early) = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n")
                    let interim = try client.readHead()
                    let early = calls.events
                    try client.write("hello world")
                    return (interim.status, try client.readResponse(), early)
                }
                #expect(interim == 100)
                #expect(early.isEmpty, "the handler runs only once the body arrived")
                #expect(response.status == 200)
                #expect(response.text == "got 11: hello world")

                // A client that sends the body without waiting gets no interim response (nothing left to ask for).
                let eager = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write("POST /eager HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\nabc")
                    return try client.readResponse()
                }
                #expect(eager.interim.isEmpty)
                #expect(eager.text == "got 3: abc")
            }
        }

        @Test func expectContinueOverTheBodyLimitIsAnswered413InsteadOf100() async throws {
            let calls = Recorder()
            try await withServer({ $0.maxBodySize = 64 * 1024 }, handler: { request in
                calls.record(request.path)
                return .text(.ok, "unexpected")
            }) { _, port in
                let (response, end) = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n")
                    let response = try client.readResponse()
                    return (response, client.awaitEnd(timeout: 3))
                }
                #expect(response.interim.isEmpty, "no 100 Continue for a body that will be refused")
                #expect(response.status == 413)
                #expect(response.closes)
                #expect(response.text.contains("payload_too_large"))
                #expect(end.ending == .closed)
                #expect(calls.events.isEmpty)
            }
        }

        @Test func chunkedRequestBodiesWithExtensionsAndTrailersArriveWhole() async throws {
            try await withServer(handler: { request in
                .text(.ok, "\(request.body.count):\(Fixture.sha256Hex(of: request.body))")
            }) { _, port in
                let payload = Fixture.content(size: 50_000, seed: 7)
                let responses = try await offThePool {
                    let client = try WireClient(port: port)
                    var wire = Array("POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Check\r\n\r\n".utf8)
                    var offset = 0
                    for size in [1, 4095, 16384, 10, 29510] {
                        wire += Array("\(String(size, radix: 16));name=\"value\"\r\n".utf8)
                        wire += payload[offset..<offset + size]
                        wire += [13, 10]
                        offset += size
                    }
                    wire += Array("0\r\nX-Check: done\r\nX-Other: 1\r\n\r\n".utf8)
                    // Dribble it in uneven pieces so chunk lines and CRLFs straddle reads.
                    var sent = 0
                    var piece = 1
                    while sent < wire.count {
                        let end = min(wire.count, sent + piece)
                        try client.write(Array(wire[sent..<end]))
                        sent = end
                        piece = piece * 7 % 9973 + 1
                        if sent < 2000 { usleep(1000) }
                    }
                    // The next request on the same connection proves the trailers were consumed exactly.
                    try client.write(WireClient.request("/after"))
                    return [try client.readResponse(), try client.readResponse()]
                }
                #expect(responses[0].status == 200)
                #expect(responses[0].text == "50000:\(Fixture.sha256Hex(of: payload))")
                #expect(responses[1].text == "0:\(Fixture.sha256Hex(of: []))")
            }
        }

        @Test func http10ClosesUnlessKeepAliveIsAsked() async throws {
            try await withServer(handler: { request in
                if request.path == "/stream" {
                    return HTTPResponse(status: .ok, body: .stream(length: nil) { stream in
                        stream.write(Array("one ".utf8))
                        stream.write(Array("two".utf8))
                        stream.finish()
                    })
                }
                return .text(.ok, "v\(request.version == .http1_0 ? "1.0" : "1.1")")
            }) { _, port in
                let plain = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write("GET /plain HTTP/1.0\r\n\r\n")
                    return (try client.readResponse(), client.awaitEnd(timeout: 3).ending)
                }
                #expect(plain.0.status == 200)
                #expect(plain.0.text == "v1.0")
                #expect(plain.0.closes)
                #expect(plain.1 == .closed)

                let kept = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write("GET /one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                    let first = try client.readResponse()
                    try client.write("GET /two HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                    let second = try client.readResponse()
                    try client.write("GET /three HTTP/1.0\r\n\r\n")
                    let third = try client.readResponse()
                    return ([first, second, third], client.awaitEnd(timeout: 3).ending)
                }
                #expect(kept.0.map(\.status) == [200, 200, 200])
                #expect(kept.0[0].header("Connection")?.lowercased() == "keep-alive")
                #expect(kept.0[1].header("Connection")?.lowercased() == "keep-alive")
                #expect(kept.0[2].closes)
                #expect(kept.1 == .closed)

                // Unknown length to an HTTP/1.0 client: no chunked coding, the body ends with the connection.
                let streamed = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write("GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
                    return try client.readResponse()
                }
                #expect(streamed.header("Transfer-Encoding") == nil)
                #expect(streamed.header("Content-Length") == nil)
                #expect(streamed.text == "one two")
            }
        }

        @Test func headAnswersWithContentLengthButNoBody() async throws {
            let directory = try Fixture.tempDirectory("ferry-http-head")
            defer { Fixture.removeTree(directory) }
            let path = directory + "/file.bin"
            try Fixture.writeFile(at: path, size: 100_000, seed: 3)
            try await withServer(handler: { request in
                switch request.path {
                case "/file": return HTTPResponse(body: .file(FileBody(path: path, offset: 0, length: 100_000)))
                case "/stream":
                    return HTTPResponse(body: .stream(length: nil) { stream in
                        stream.write([1, 2, 3])
                        stream.finish()
                    })
                default: return HTTPResponse(body: .bytes(Fixture.content(size: 1234, seed: 1)))
                }
            }) { _, port in
                let (responses, end) = try await offThePool {
                    let client = try WireClient(port: port)
                    var responses: [WireResponse] = []
                    for (method, target) in [("HEAD", "/bytes"), ("HEAD", "/file"), ("HEAD", "/stream"), ("GET", "/bytes")] {
                        try client.write(WireClient.request(target, method: method))
                        responses.append(try client.readResponse(head: method == "HEAD"))
                    }
                    // Nothing may follow: a body sent for a HEAD would show up here.
                    return (responses, client.awaitEnd(timeout: 0.3))
                }
                #expect(responses.map(\.status) == [200, 200, 200, 200])
                #expect(responses[0].header("Content-Length") == "1234")
                #expect(responses[1].header("Content-Length") == "100000")
                #expect(responses[2].header("Transfer-Encoding") == "chunked")
                #expect(responses[3].body.count == 1234)
                #expect(end.ending == .timedOut)
                #expect(end.extraBytes == 0)
            }
        }

        @Test func streamedResponsesOfUnknownLengthAreChunked() async throws {
            try await withServer(handler: { request in
                let known = request.path == "/known"
                return HTTPResponse(body: .stream(length: known ? 15 : nil) { stream in
                    let queue = DispatchQueue.global()
                    stream.write(Array("alpha".utf8))
                    queue.asyncAfter(deadline: .now() + 0.02) {
                        stream.write(Array("bravo".utf8))
                        queue.asyncAfter(deadline: .now() + 0.02) {
                            stream.write(Array("gamma".utf8))
                            stream.finish()
                        }
                    }
                })
            }) { _, port in
                let responses = try await offThePool {
                    let client = try WireClient(port: port)
                    var responses: [WireResponse] = []
                    for target in ["/unknown", "/known", "/unknown"] {
                        try client.write(WireClient.request(target))
                        responses.append(try client.readResponse())
                    }
                    return responses
                }
                #expect(responses.map(\.text) == ["alphabravogamma", "alphabravogamma", "alphabravogamma"])
                #expect(responses[0].header("Transfer-Encoding") == "chunked")
                #expect(responses[0].header("Content-Length") == nil)
                #expect(responses[1].header("Transfer-Encoding") == nil)
                #expect(responses[1].header("Content-Length") == "15")
                #expect(responses.allSatisfy { !$0.closes })
            }
        }

        /// A stream may queue regions of a file between its bytes (`writeFile`, sent with sendfile): the body is the
        /// pieces in order, framed as chunks when the length is unknown, and the file is closed once its last
        /// region went, even after the producer let it go.
        @Test func streamedFileRegionsGoInOrderBetweenBytes() async throws {
            let directory = try Fixture.tempDirectory("ferry-http-stream-file")
            defer { Fixture.removeTree(directory) }
            let path = directory + "/content.bin"
            let content = Fixture.content(size: 3_000_000, seed: 12)
            try Data(content).write(to: URL(fileURLWithPath: path))
            let expected = Array("head".utf8) + content[1_000..<2_500_000] + Array("mid".utf8) + content[..<10] + Array("tail".utf8)
            try await withServer(handler: { request in
                let known = request.path == "/known"
                return HTTPResponse(body: .stream(length: known ? Int64(expected.count) : nil) { stream in
                    let file = StreamFile(descriptor: open(path, O_RDONLY | O_CLOEXEC))
                    stream.write(Array("head".utf8))
                    stream.writeFile(file, offset: 1_000, length: 2_499_000)
                    stream.write(Array("mid".utf8))
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) {
                        stream.writeFile(file, offset: 0, length: 10)
                        stream.write(Array("tail".utf8))
                        stream.finish()
                    }
                })
            }) { _, port in
                let responses = try await offThePool {
                    let client = try WireClient(port: port)
                    var responses: [WireResponse] = []
                    for target in ["/unknown", "/known", "/unknown"] {
                        try client.write(WireClient.request(target))
                        responses.append(try client.readResponse())
                    }
                    return responses
                }
                #expect(responses.allSatisfy { $0.body == expected })
                #expect(responses[0].header("Transfer-Encoding") == "chunked")
                #expect(responses[1].header("Content-Length") == "\(expected.count)")
                #expect(responses.allSatisfy { !$0.closes })
            }
        }

        @Test func fileBodiesAreServedExactly() async throws {
            let directory = try Fixture.tempDirectory("ferry-http-file")
            defer { Fixture.removeTree(directory) }
            let path = directory + "/content.bin"
            let size = 3 * 1024 * 1024 + 12_345
            try Fixture.writeFile(at: path, size: size, seed: 11)
            let content = Fixture.content(size: size, seed: 11)
            let region = (offset: 70_001, length: 1_000_003)
            try await withServer(handler: { request in
                switch request.path {
                case "/whole": return HTTPResponse(body: .file(FileBody(path: path, offset: 0, length: Int64(size))))
                case "/region":
                    return HTTPResponse(body: .file(FileBody(path: path, offset: Int64(region.offset), length: Int64(region.length))))
                case "/parts":
                    return HTTPResponse(body: .parts([
                        .bytes(Array("<head>".utf8)),
                        .file(FileBody(path: path, offset: 5, length: 10)),
                        .file(FileBody(path: path, offset: Int64(size - 200_000), length: 200_000)),
                        .bytes(Array("<tail>".utf8)),
                    ]))
                default: return HTTPResponse(body: .file(FileBody(path: directory + "/missing", offset: 0, length: 10)))
                }
            }) { _, port in
                // A small receive buffer and a pause before reading make sendfile hit a full socket and resume.
                let responses = try await offThePool {
                    let client = try WireClient(port: port, receiveBuffer: 32 * 1024)
                    var responses: [WireResponse] = []
                    for target in ["/whole", "/region", "/parts", "/missing", "/whole"] {
                        try client.write(WireClient.request(target))
                        usleep(50_000)
                        responses.append(try client.readResponse())
                    }
                    return responses
                }
                #expect(responses.map(\.status) == [200, 200, 200, 500, 200])
                for index in [0, 4] {
                    #expect(responses[index].body.count == size)
                    #expect(Fixture.sha256Hex(of: responses[index].body) == Fixture.sha256Hex(of: content))
                }
                let expectedRegion = Array(content[region.offset..<region.offset + region.length])
                #expect(responses[1].body.count == region.length)
                #expect(Fixture.sha256Hex(of: responses[1].body) == Fixture.sha256Hex(of: expectedRegion))
                let expectedParts = Array("<head>".utf8) + content[5..<15] + content[(size - 200_000)...] + Array("<tail>".utf8)
                #expect(responses[2].body.count == expectedParts.count)
                #expect(Fixture.sha256Hex(of: responses[2].body) == Fixture.sha256Hex(of: expectedParts))
            }
        }

        @Test func aHalfClosedClientStillGetsItsAnswers() async throws {
            try await withServer(handler: { request in
                try? await Task.sleep(nanoseconds: 50_000_000)
                return .text(.ok, request.path)
            }) { _, port in
                let (responses, end) = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/one") + WireClient.request("/two"))
                    client.halfClose()
                    let responses = [try client.readResponse(), try client.readResponse()]
                    return (responses, client.awaitEnd(timeout: 3).ending)
                }
                #expect(responses.map(\.text) == ["/one", "/two"])
                #expect(end == .closed)
            }
        }
    }
}
