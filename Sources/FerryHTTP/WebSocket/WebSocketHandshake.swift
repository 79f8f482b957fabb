import CCrypto
import Foundation

/// The server's side of the WebSocket opening handshake (RFC 6455, section 4.2): whether a request asks for one, and
/// the `101 Switching Protocols` answer with `Sec-WebSocket-Accept` (base64 of libcrypto's SHA-1 of the key and the
/// protocol's GUID). Pure.
public enum WebSocketHandshake {
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Whether the request asks to switch to WebSocket (`Upgrade: websocket`, case-insensitive).
    public static func isUpgrade(_ request: HTTPRequest) -> Bool {
        request.headers["Upgrade"].map { $0.lowercased().contains("websocket") } ?? false
    }

    /// Why the handshake is refused (a `GET` with `Connection: Upgrade`, `Sec-WebSocket-Version: 13` and a key of 16
    /// bytes in base64), or nil when it may proceed.
    public static func refusal(_ request: HTTPRequest) -> String? {
        guard request.method == .GET else { return "a WebSocket handshake is a GET" }
        let connection = request.headers.listValues("connection").map { $0.lowercased() }
        guard connection.contains("upgrade") else { return "a WebSocket handshake needs 'Connection: Upgrade'" }
        guard request.headers["Sec-WebSocket-Version"]?.trimmingCharacters(in: .whitespaces) == "13" else {
            return "only WebSocket version 13 is spoken"
        }
        guard let key = request.headers["Sec-WebSocket-Key"]?.trimmingCharacters(in: .whitespaces),
              Data(base64Encoded: key)?.count == 16 else {
            return "'Sec-WebSocket-Key' must be 16 bytes in base64"
        }
        return nil
    }

    /// `Sec-WebSocket-Accept` for a key.
    public static func accept(key: String) -> String {
        let input = Array((key.trimmingCharacters(in: .whitespaces) + guid).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = input.withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha1(), nil)
        }
        return Data(digest).base64EncodedString()
    }

    /// The `101` answer whose connection then carries WebSocket frames: `session` is called on the connection's queue
    /// with the stream the server's frames go to, and returns what receives the client's bytes (on that queue).
    public static func response(for request: HTTPRequest,
                                session: @escaping @Sendable (ResponseStream) -> UpgradeReader) -> HTTPResponse {
        HTTPResponse(status: HTTPStatus(code: 101),
                     headers: ["Upgrade": "websocket",
                               "Sec-WebSocket-Accept": accept(key: request.headers["Sec-WebSocket-Key"] ?? "")],
                     body: .upgrade(session))
    }
}
