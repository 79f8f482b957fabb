import Testing
@testable import FerryHTTP

@Suite("WebSocket frames")
struct WebSocketFrameTests {
    /// A client frame: masked with `mask`, the length in its shortest form unless `length` forces one.
    static func frame(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, _ payload: [UInt8], masked: Bool = true,
                      mask: [UInt8] = [0x37, 0xfa, 0x21, 0x3d], length: UInt64? = nil) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let size = length ?? UInt64(payload.count)
        let maskBit: UInt8 = masked ? 0x80 : 0
        if size <= 125 {
            out.append(maskBit | UInt8(size))
        } else if size <= 0xFFFF {
            out += [maskBit | 126, UInt8(size >> 8), UInt8(size & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((size >> UInt64(shift)) & 0xFF)) }
        }
        guard masked else { return out + payload }
        out += mask
        return out + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    static func events(_ bytes: [UInt8], max limit: Int = 1 << 20, chunk: Int? = nil) -> [WebSocketFrameParser.Event] {
        var parser = WebSocketFrameParser(maxMessageSize: limit)
        var events: [WebSocketFrameParser.Event] = []
        let step = chunk ?? max(1, bytes.count)
        var index = 0
        repeat {
            parser.append(bytes[index..<min(bytes.count, index + step)])
            index += step
            while let event = parser.next() { events.append(event) }
        } while index < bytes.count
        return events
    }

    @Test func maskedTextBinaryPingPongAndCloseAreRead() {
        let bytes = Self.frame(opcode: 1, Array("Hello".utf8)) + Self.frame(opcode: 2, [1, 2, 3])
            + Self.frame(opcode: 9, Array("p".utf8)) + Self.frame(opcode: 0xA, []) + Self.frame(opcode: 8, [0x03, 0xE8] + Array("bye".utf8))
        let expected: [WebSocketFrameParser.Event] = [.text("Hello"), .binary([1, 2, 3]), .ping(Array("p".utf8)), .pong([]),
                                                      .close(code: 1000, reason: "bye")]
        #expect(Self.events(bytes) == expected)
        // The same bytes a byte at a time.
        #expect(Self.events(bytes, chunk: 1) == expected)
        #expect(Self.events(Self.frame(opcode: 8, [])) == [.close(code: nil, reason: "")])
    }

    @Test func lengthsOf16And64BitsAreRead() {
        let medium = [UInt8](repeating: 0x61, count: 300)
        let large = [UInt8](repeating: 0x62, count: 70_000)
        #expect(Self.events(Self.frame(opcode: 1, medium)) == [.text(String(repeating: "a", count: 300))])
        #expect(Self.events(Self.frame(opcode: 1, large), chunk: 4096) == [.text(String(repeating: "b", count: 70_000))])
    }

    @Test func fragmentsMakeOneMessageWithControlFramesBetween() {
        let bytes = Self.frame(fin: false, opcode: 1, Array("Hel".utf8)) + Self.frame(opcode: 9, [7])
            + Self.frame(fin: false, opcode: 0, Array("l".utf8)) + Self.frame(opcode: 0, Array("o".utf8))
        #expect(Self.events(bytes) == [.ping([7]), .text("Hello")])
        // A character split across fragments is checked whole.
        let euro = Array("€".utf8)
        let split = Self.frame(fin: false, opcode: 1, [euro[0]]) + Self.frame(opcode: 0, Array(euro[1...]))
        #expect(Self.events(split) == [.text("€")])
    }

    @Test func hostileFramesGetTheirCloseCodes() {
        let text = Array("x".utf8)
        let cases: [([UInt8], WebSocketCloseCode)] = [
            (Self.frame(opcode: 1, text, masked: false), .protocolError),
            (Self.frame(rsv: 4, opcode: 1, text), .protocolError),
            (Self.frame(opcode: 3, text), .protocolError),
            (Self.frame(opcode: 0xB, text), .protocolError),
            (Self.frame(fin: false, opcode: 9, text), .protocolError),
            (Self.frame(opcode: 9, [UInt8](repeating: 0, count: 126)), .protocolError),
            (Self.frame(opcode: 0, text), .protocolError),
            (Self.frame(fin: false, opcode: 1, text) + Self.frame(opcode: 1, text), .protocolError),
            (Self.frame(opcode: 8, [0x03]), .protocolError),
            (Self.frame(opcode: 8, [0x03, 0xED]), .protocolError),   // 1005 is never sent
            (Self.frame(opcode: 8, [0x03, 0xE8, 0xFF]), .invalidData),
            (Self.frame(opcode: 1, [0xC3, 0x28]), .invalidData),
            (Self.frame(opcode: 1, [0xED, 0xA0, 0x80]), .invalidData),  // a surrogate
            (Self.frame(opcode: 1, [], length: 1 << 63), .protocolError),
            (Self.frame(opcode: 1, [], length: 1 << 40), .messageTooBig),
            (Self.frame(opcode: 1, [UInt8](repeating: 0x61, count: 2000)), .messageTooBig),
            (Self.frame(fin: false, opcode: 1, [UInt8](repeating: 0x61, count: 600))
                + Self.frame(opcode: 0, [UInt8](repeating: 0x61, count: 600)), .messageTooBig),
        ]
        for (bytes, code) in cases {
            let events = Self.events(bytes, max: 1024)
            #expect(events.last == .error(code), "\(bytes.prefix(12)) should close with \(code.rawValue)")
        }
    }

    @Test func nothingIsReadAfterAnError() {
        var parser = WebSocketFrameParser()
        parser.append(Self.frame(opcode: 1, [0x61], masked: false))
        #expect(parser.next() == .error(.protocolError))
        parser.append(Self.frame(opcode: 1, [0x61]))
        #expect(parser.next() == nil)
    }

    @Test func theEncoderWritesUnmaskedFinalFramesInTheShortestForm() {
        #expect(WebSocketFrameEncoder.text("Hi") == [0x81, 2, 0x48, 0x69])
        #expect(Array(WebSocketFrameEncoder.frame(.binary, [UInt8](repeating: 0, count: 126)).prefix(4)) == [0x82, 126, 0, 126])
        #expect(Array(WebSocketFrameEncoder.frame(.text, [UInt8](repeating: 0, count: 65_536)).prefix(10))
            == [0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0])
        #expect(WebSocketFrameEncoder.close(.messageTooBig) == [0x88, 2, 0x03, 0xF1])
        let long = WebSocketFrameEncoder.close(.normal, reason: String(repeating: "é", count: 100))
        #expect(long.count <= 127 && long[1] <= 125)
        #expect(String(validatingUTF8Bytes: Array(long[4...])) != nil)
    }

    @Test func theAcceptKeyIsRFC6455s() {
        // RFC 6455, section 1.3.
        #expect(WebSocketHandshake.accept(key: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
