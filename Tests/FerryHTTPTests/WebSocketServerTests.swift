import Foundation
import FerryTestSupport
import Testing
@testable import FerryHTTP

/// WebSocket on the live server: a connection that answers `101` carries frames both ways, then closes.
@Suite("WebSocket on the server")
struct WebSocketServerTests {
    static let handshake = "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    /// Echoes each text message upper-cased.
    static let echo: HTTPHandler = { request in
        guard WebSocketHandshake.isUpgrade(request), WebSocketHandshake.refusal(request) == nil else {
            return .text(.badRequest, "no")
        }
        return WebSocketSession.response(for: request, maxMessageSize: 1024, onOpen: { _ in },
                                         onText: { session, text in session.send(text.uppercased()) })
    }

    static func frame(_ opcode: UInt8, _ text: String, masked: Bool = true) -> [UInt8] {
        WebSocketFrameTests.frame(opcode: opcode, Array(text.utf8), masked: masked)
    }

    @Test func messagesPingsAndTheCloseHandshakeGoBothWays() async throws {
        try await withServer(handler: Self.echo) { _, port in
            let (head, echoed, pong, closed, end) = try await offThePool {
                let client = try WireClient(port: port, timeout: 30)  // a full parallel run can hold the server's handler ~8 s
                // The first frame follows the handshake at once, before the 101 arrives.
                try client.write(Array(Self.handshake.utf8) + Self.frame(1, "hello"))
                let head = try client.readHead()
                let echoed = try client.readExactly(7)
                try client.write(Self.frame(9, "p"))
                let pong = try client.readExactly(3)
                try client.write(WebSocketFrameTests.frame(opcode: 8, [0x03, 0xE8]))
                let closed = try client.readExactly(4)
                return (head, echoed, pong, closed, client.awaitEnd(timeout: 3).ending)
            }
            #expect(head.status == 101)
            #expect(head.headers.contains { $0.name == "Sec-WebSocket-Accept" && $0.value == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" })
            #expect(head.headers.contains { $0.name == "Connection" && $0.value == "Upgrade" })
            #expect(echoed == WebSocketFrameEncoder.text("HELLO"))
            #expect(pong == [0x8A, 1, UInt8(ascii: "p")])
            #expect(closed == WebSocketFrameEncoder.close(.normal))
            #expect(end == .closed)
        }
    }

    @Test func aHostileFrameClosesWithItsCodeAndTheServerServesOn() async throws {
        try await withServer(handler: Self.echo) { _, port in
            let cases: [([UInt8], WebSocketCloseCode)] = [
                (Self.frame(1, "x", masked: false), .protocolError),
                (WebSocketFrameTests.frame(opcode: 1, [0xC3, 0x28]), .invalidData),
                (WebSocketFrameTests.frame(opcode: 1, [], length: 1 << 20), .messageTooBig),
            ]
            for (bytes, code) in cases {
                let (closed, end) = try await offThePool {
                    let client = try WireClient(port: port, timeout: 30)  // a full parallel run can hold the server's handler ~8 s
                    try client.write(Self.handshake)
                    _ = try client.readHead()
                    try client.write(bytes)
                    return (try client.readExactly(4), client.awaitEnd(timeout: 3).ending)
                }
                #expect(closed == WebSocketFrameEncoder.close(code))
                #expect(end == .closed)
            }
            let plain = try await offThePool {
                let client = try WireClient(port: port, timeout: 30)  // a full parallel run can hold the server's handler ~8 s
                try client.write("GET /ws HTTP/1.1\r\nHost: x\r\n\r\n")
                return try client.readResponse()
            }
            #expect(plain.status == 400)
        }
    }
}
