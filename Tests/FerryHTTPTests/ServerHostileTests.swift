import Foundation
import Testing
@testable import FerryHTTP
import FerryTestSupport

/// One malformed or abusive request and the status it must get.
struct HostileCase: Sendable, CustomTestStringConvertible {
    let name: String
    let wire: [UInt8]
    let status: Int

    init(_ name: String, _ wire: String, _ status: Int) {
        self.name = name
        self.wire = Array(wire.utf8)
        self.status = status
    }

    var testDescription: String { "\(name) → \(status)" }

    /// Limits the hostile server runs with (small, so the cases stay small).
    static let limits = RequestLimits(requestLine: 1024, headerBlock: 4096, headerCount: 20)
    static let maxBodySize = 64 * 1024

    static let all: [HostileCase] = [
        HostileCase("oversized request line", "GET /\(String(repeating: "a", count: 2000)) HTTP/1.1\r\nHost: x\r\n\r\n", 414),
        HostileCase("oversized request line, no end in sight", "GET /\(String(repeating: "b", count: 1500))", 414),
        HostileCase("oversized header block", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "c", count: 5000))\r\n\r\n", 431),
        HostileCase("too many header fields",
                    "GET / HTTP/1.1\r\nHost: x\r\n" + (0..<30).map { "X-F\($0): v\r\n" }.joined() + "\r\n", 431),
        HostileCase("Content-Length with Transfer-Encoding",
                    "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
        HostileCase("non-numeric Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n", 400),
        HostileCase("negative Content-Length", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        HostileCase("differing Content-Lengths", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef", 400),
        HostileCase("obsolete line folding", "GET / HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n  b\r\n\r\n", 400),
        HostileCase("bare CR in a field value", "GET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\rb\r\n\r\n", 400),
        HostileCase("bare LF line ending", "GET / HTTP/1.1\nHost: x\n\n", 400),
        HostileCase("space before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400),
        HostileCase("missing Host", "GET / HTTP/1.1\r\n\r\n", 400),
        HostileCase("unknown transfer coding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
        HostileCase("unknown coding before chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
        HostileCase("Content-Length over the body limit", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65537\r\n\r\n", 413),
        HostileCase("chunked body over the body limit",
                    "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8000\r\n\(String(repeating: "d", count: 0x8000))\r\n"
                        + "8001\r\n\(String(repeating: "e", count: 100))", 413),
        HostileCase("invalid chunk size", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
        HostileCase("unsupported expectation", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nExpect: teapot\r\n\r\nx", 417),
        HostileCase("HTTP/2 request line", "GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505),
        HostileCase("garbage", "\u{1}\u{2}\u{3} nonsense\r\n\r\n", 400),
    ]
}

extension ServerTests {
    /// Hostile or broken input on the wire: each is answered with its status, then the connection closes; the
    /// handler never sees it.
    @Suite struct HostileInput {
        @Test(arguments: HostileCase.all)
        func isAnsweredThenClosed(_ hostile: HostileCase) async throws {
            let calls = Recorder()
            try await withServer({
                $0.limits = HostileCase.limits
                $0.maxBodySize = HostileCase.maxBodySize
            }, handler: { request in
                calls.record(request.path)
                return .text(.ok, "handled")
            }) { server, port in
                let (response, end) = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write(hostile.wire)
                    let response = try client.readResponse()
                    return (response, client.awaitEnd(timeout: 3))
                }
                #expect(response.status == hostile.status)
                #expect(response.closes, "Connection: close")
                #expect(response.header("Content-Type") == "application/json")
                #expect(response.text.hasPrefix(#"{"error":{"code":"#))
                #expect(end.ending == .closed, "closed in order (FIN, not RST) so the client sees the answer")
                #expect(calls.events.isEmpty)
                #expect(await eventually { server.openConnectionCount == 0 })
            }
        }

        @Test func aSmuggledRequestBehindAnAmbiguousOneIsNeverHandled() async throws {
            let calls = Recorder()
            try await withServer(handler: { request in
                calls.record(request.path)
                try? await Task.sleep(nanoseconds: 100_000_000)
                return .text(.ok, "handled \(request.path)")
            }) { _, port in
                let (responses, end) = try await offThePool {
                    let client = try WireClient(port: port)
                    try client.write(WireClient.request("/first")
                        + "POST /ambiguous HTTP/1.1\r\nHost: x\r\nContent-Length: 38\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n")
                    let responses = [try client.readResponse(), try client.readResponse()]
                    return (responses, client.awaitEnd(timeout: 3).ending)
                }
                #expect(responses.map(\.status) == [200, 400])
                #expect(responses[0].text == "handled /first")
                #expect(!responses[0].closes)
                #expect(responses[1].closes)
                #expect(end == .closed)
                #expect(calls.events == ["/first"])
            }
        }

        @Test func staticFilesNeverLeaveTheirRootThroughTheServer() async throws {
            let base = try Fixture.tempDirectory("ferry-http-traversal")
            defer { Fixture.removeTree(base) }
            let root = base + "/public"
            let manager = FileManager.default
            try manager.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
            try Data("TOP-SECRET".utf8).write(to: URL(fileURLWithPath: base + "/secret.txt"))
            try Data("hello".utf8).write(to: URL(fileURLWithPath: root + "/a.txt"))
            try Data("<h1>index</h1>".utf8).write(to: URL(fileURLWithPath: root + "/index.html"))
            try Data("sub".utf8).write(to: URL(fileURLWithPath: root + "/sub/b.txt"))
            try manager.createSymbolicLink(atPath: root + "/leak.txt", withDestinationPath: "../secret.txt")
            try manager.createSymbolicLink(atPath: root + "/up", withDestinationPath: "..")
            try manager.createSymbolicLink(atPath: root + "/etc", withDestinationPath: "/etc")
            try manager.createSymbolicLink(atPath: root + "/passwd", withDestinationPath: "/etc/passwd")

            let files = StaticFiles(root: root)
            let router = Router()
            router.add(.GET, "/api/ping") { _ in .text(.ok, "pong") }
            router.fallback = { request in
                await files.handle(request) ?? errorResponse(.notFound, code: "not_found", message: "Nothing here.")
            }
            let attempts = [
                "/..%2f..%2fetc/passwd",
                "/..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd",
                "/%2e%2e/secret.txt",
                "/%2e%2e%2fsecret.txt",
                "/%2E%2E/%2E%2E/%2E%2E/etc/passwd",
                "/.%2e/secret.txt",
                "/../secret.txt",
                "/sub/../../secret.txt",
                "/..%5csecret.txt",
                "/%5c..%5c..%5cetc%5cpasswd",
                "//etc/passwd",
                "/%2fetc%2fpasswd",
                "/etc/passwd",
                "/passwd",
                "/leak.txt",
                "/up/secret.txt",
                "http://127.0.0.1/../secret.txt",
                "/a.txt%00.html",
                "/.hidden",
                "/sub/%2e%2e/%2e%2e/secret.txt",
            ]
            try await withServer(handler: { request in await router.handle(request) }) { _, port in
                let targets = ["/a.txt", "/", "/sub/b.txt"] + attempts
                let responses = try await offThePool {
                    let client = try WireClient(port: port)
                    return try targets.map { target in
                        try client.write(WireClient.request(target))
                        return try client.readResponse()
                    }
                }
                #expect(responses[0].status == 200 && responses[0].text == "hello")
                #expect(responses[1].status == 200 && responses[1].text == "<h1>index</h1>")
                #expect(responses[2].status == 200 && responses[2].text == "sub")
                for (target, response) in zip(attempts, responses.dropFirst(3)) {
                    #expect(response.status == 404, "\(target) answered \(response.status)")
                    #expect(!response.text.contains("TOP-SECRET"), "\(target) leaked the secret")
                    #expect(!response.text.contains("root:"), "\(target) leaked /etc/passwd")
                }
            }
        }
    }
}
