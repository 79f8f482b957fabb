/// Reads a client's WebSocket frames (RFC 6455, section 5) into messages, checking everything a server must: client
/// frames masked, no reserved bits (no extension is negotiated), known opcodes, control frames whole and at most 125
/// bytes, continuation frames only inside a fragmented message, a message at most `maxMessageSize` bytes, text valid
/// UTF-8, a close frame's code and reason well formed. A violation is an `.error` with the close code to send (1002
/// protocol error, 1007 invalid data, 1009 too big); the parser then yields nothing more. Pure; owned by one connection.
public struct WebSocketFrameParser: Sendable {
    public enum Event: Equatable, Sendable {
        case text(String)
        case binary([UInt8])
        case ping([UInt8])
        case pong([UInt8])
        /// The peer's close frame: its code (nil when the frame had none) and reason.
        case close(code: UInt16?, reason: String)
        /// The connection must be closed with this code.
        case error(WebSocketCloseCode)
    }

    public let maxMessageSize: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// The opcode and bytes so far of a fragmented message.
    private var fragmented: (opcode: UInt8, payload: [UInt8])?
    private var failed = false

    public init(maxMessageSize: Int = 1 << 20) {
        self.maxMessageSize = maxMessageSize
    }

    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        guard !failed else { return }
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65_536 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes received and not yet part of an event.
    public var bufferedByteCount: Int { buffer.count - start }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() -> Event? {
        guard !failed else { return nil }
        while true {
            guard let frame = readFrame() else { return nil }
            switch frame {
            case .failure(let code): return fail(code)
            case .success(let (fin, opcode, payload)):
                if let event = handle(fin: fin, opcode: opcode, payload: payload) { return event }
            }
        }
    }

    private mutating func fail(_ code: WebSocketCloseCode) -> Event {
        failed = true
        buffer = []
        start = 0
        fragmented = nil
        return .error(code)
    }

    /// One whole frame, unmasked; nil when incomplete.
    private mutating func readFrame() -> Result<(Bool, UInt8, [UInt8]), WebSocketCloseCode>? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start], second = buffer[start + 1]
        let fin = first & 0x80 != 0
        let opcode = first & 0x0F
        guard first & 0x70 == 0 else { return .failure(.protocolError) }
        guard [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(opcode) else { return .failure(.protocolError) }
        guard second & 0x80 != 0 else { return .failure(.protocolError) }  // clients must mask
        var length = UInt64(second & 0x7F)
        var headerLength = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = 0
            for index in 0..<8 { length = length << 8 | UInt64(buffer[start + 2 + index]) }
            guard length >> 63 == 0 else { return .failure(.protocolError) }
            headerLength = 10
        }
        let isControl = opcode & 0x08 != 0
        if isControl, !fin || length > 125 { return .failure(.protocolError) }
        let already = fragmented?.payload.count ?? 0
        if !isControl, length > UInt64(maxMessageSize - (opcode == 0 ? already : 0)) { return .failure(.messageTooBig) }
        let total = headerLength + 4 + Int(length)
        guard available >= total else { return nil }
        let maskStart = start + headerLength
        let mask = (buffer[maskStart], buffer[maskStart + 1], buffer[maskStart + 2], buffer[maskStart + 3])
        var payload = Array(buffer[(maskStart + 4)..<(start + total)])
        for index in payload.indices {
            switch index & 3 {
            case 0: payload[index] ^= mask.0
            case 1: payload[index] ^= mask.1
            case 2: payload[index] ^= mask.2
            default: payload[index] ^= mask.3
            }
        }
        start += total
        return .success((fin, opcode, payload))
    }

    private mutating func handle(fin: Bool, opcode: UInt8, payload: [UInt8]) -> Event? {
        switch opcode {
        case 0x8: return close(payload)
        case 0x9: return .ping(payload)
        case 0xA: return .pong(payload)
        case 0x0:
            guard var message = fragmented else { return fail(.protocolError) }
            message.payload += payload
            guard fin else {
                fragmented = message
                return nil
            }
            fragmented = nil
            return complete(opcode: message.opcode, payload: message.payload)
        default:
            guard fragmented == nil else { return fail(.protocolError) }
            guard fin else {
                fragmented = (opcode, payload)
                return nil
            }
            return complete(opcode: opcode, payload: payload)
        }
    }

    private mutating func complete(opcode: UInt8, payload: [UInt8]) -> Event {
        guard opcode == 0x1 else { return .binary(payload) }
        guard let text = String(validatingUTF8Bytes: payload) else { return fail(.invalidData) }
        return .text(text)
    }

    private mutating func close(_ payload: [UInt8]) -> Event {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { return fail(.protocolError) }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.mayBeSent(code) else { return fail(.protocolError) }
        guard let reason = String(validatingUTF8Bytes: Array(payload[2...])) else { return fail(.invalidData) }
        return .close(code: code, reason: reason)
    }
}

extension String {
    /// The text of `bytes` when they are valid UTF-8, else nil (never repaired).
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(decoding: bytes, as: UTF8.self)
    }
}
