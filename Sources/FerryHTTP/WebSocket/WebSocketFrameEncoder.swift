/// Encodes a server's WebSocket frames (RFC 6455, section 5.2): one final frame, unmasked, with the shortest length
/// encoding. Pure.
public enum WebSocketFrameEncoder {
    public enum Opcode: UInt8, Sendable {
        case text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA
    }

    public static func frame(_ opcode: Opcode, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 10)
        out.append(0x80 | opcode.rawValue)
        switch payload.count {
        case 0...125:
            out.append(UInt8(payload.count))
        case 126...0xFFFF:
            out.append(126)
            out.append(UInt8(payload.count >> 8))
            out.append(UInt8(payload.count & 0xFF))
        default:
            out.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((UInt64(payload.count) >> UInt64(shift)) & 0xFF)) }
        }
        out.append(contentsOf: payload)
        return out
    }

    public static func text(_ text: String) -> [UInt8] { frame(.text, Array(text.utf8)) }

    /// A close frame with `code` and a reason cut to fit a control frame (at most 123 bytes, whole characters).
    public static func close(_ code: WebSocketCloseCode, reason: String = "") -> [UInt8] {
        var reasonBytes: [UInt8] = []
        for character in reason {
            let bytes = Array(String(character).utf8)
            guard reasonBytes.count + bytes.count <= 123 else { break }
            reasonBytes += bytes
        }
        return frame(.close, [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + reasonBytes)
    }
}
