import Synchronization

/// One WebSocket connection after its handshake (RFC 6455): reads the client's frames (`WebSocketFrameParser`),
/// answers pings, completes the close handshake, closes with 1002, 1003, 1007 or 1009 on a bad frame, and hands each
/// text message to `onText`. The server's messages go out with `send`; the outbound queue is bounded: a reader that
/// lets `maxOutbound` bytes pile up is disconnected, so a slow client never holds anything else back.
///
/// The parser is confined to the connection's queue (the reader runs there); `send` and `close` may be called from
/// any thread (the stream is thread-safe; `closing` is atomic).
public final class WebSocketSession: @unchecked Sendable {
    /// Bytes queued for the client beyond which it is disconnected.
    public static let maxOutbound = 4 << 20

    public let stream: ResponseStream
    private var parser: WebSocketFrameParser
    private let onText: @Sendable (WebSocketSession, String) -> Void
    private let closing = Atomic<Bool>(false)

    init(stream: ResponseStream, maxMessageSize: Int, onText: @escaping @Sendable (WebSocketSession, String) -> Void) {
        self.stream = stream
        self.parser = WebSocketFrameParser(maxMessageSize: maxMessageSize)
        self.onText = onText
    }

    /// The `101` answer to `request` (already checked with `WebSocketHandshake.refusal`): `onOpen` gets the session
    /// before its first message; `onText` gets each text message, in order, on the connection's queue (it should not
    /// block: hand the work elsewhere).
    public static func response(for request: HTTPRequest, maxMessageSize: Int = 1 << 20,
                                onOpen: @escaping @Sendable (WebSocketSession) -> Void,
                                onText: @escaping @Sendable (WebSocketSession, String) -> Void) -> HTTPResponse {
        WebSocketHandshake.response(for: request) { stream in
            let session = WebSocketSession(stream: stream, maxMessageSize: maxMessageSize, onText: onText)
            onOpen(session)
            return { bytes in session.receive(bytes) }
        }
    }

    public var isClosed: Bool { closing.load(ordering: .acquiring) || stream.isClosed }

    /// Sends a text message; false when the session is closing or was closed, or the client is too far behind
    /// (it is then disconnected).
    @discardableResult
    public func send(_ text: String) -> Bool {
        guard !isClosed else { return false }
        guard stream.bufferedByteCount <= Self.maxOutbound else {
            closing.store(true, ordering: .releasing)
            stream.abort()
            return false
        }
        stream.write(WebSocketFrameEncoder.text(text))
        return true
    }

    /// Starts the close handshake: sends a close frame with `code` and closes once it is written.
    public func close(_ code: WebSocketCloseCode = .normal, reason: String = "") {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stream.write(WebSocketFrameEncoder.close(code, reason: reason))
        stream.finish()
    }

    /// Called on the connection's queue with the client's bytes.
    private func receive(_ bytes: [UInt8]) {
        guard !closing.load(ordering: .acquiring) else { return }
        parser.append(bytes)
        while let event = parser.next() {
            switch event {
            case .text(let text): onText(self, text)
            case .binary: close(.unsupportedData, reason: "text messages only")
            case .ping(let payload):
                // A client that pings without reading the pongs is as far behind as one that reads nothing.
                guard stream.bufferedByteCount <= Self.maxOutbound else {
                    closing.store(true, ordering: .releasing)
                    stream.abort()
                    return
                }
                stream.write(WebSocketFrameEncoder.frame(.pong, payload))
            case .pong: continue
            case .close(let code, _):
                // Echo the peer's code (an empty close frame is answered with an empty one).
                guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
                stream.write(code.map { WebSocketFrameEncoder.close(WebSocketCloseCode(rawValue: $0)) }
                    ?? WebSocketFrameEncoder.frame(.close, []))
                stream.finish()
            case .error(let code): close(code)
            }
            if closing.load(ordering: .acquiring) { return }
        }
    }
}
