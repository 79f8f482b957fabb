import Dispatch
import Testing
@testable import FerryHTTP

/// A WebSocket client that reads nothing holds at most `maxOutbound` bytes of the server's messages, then is
/// disconnected (docs/ARCHITECTURE.md's bounds table; issue 32).
struct WebSocketOutboundTests {
    @Test func aClientThatReadsNothingIsDisconnectedPastTheBound() {
        let queue = DispatchQueue(label: "test.websocket")
        let session = WebSocketSession(stream: ResponseStream(queue: queue), maxMessageSize: 1 << 20, onText: { _, _ in })
        let message = String(repeating: "x", count: 1_000)
        var sent = 0
        while session.send(message) {
            sent += 1
            if sent > 10_000 { break }
        }
        queue.sync {}
        let frame = 1_000 + 4  // a 1,000-byte text frame: 2 bytes of header and a 16-bit length
        #expect(sent == WebSocketSession.maxOutbound / frame + 1, "sent until more than 4 MiB waited, then refused")
        #expect(session.isClosed, "disconnected")
        #expect(session.stream.bufferedByteCount <= WebSocketSession.maxOutbound + frame)
        #expect(!session.send(message), "and stays so")
    }
}
