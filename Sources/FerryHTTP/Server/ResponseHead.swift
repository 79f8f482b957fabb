/// Serializes a response head: status line, the handler's fields (minus the ones the server owns), `Date`,
/// framing and `Connection`. Field lines with invalid names or CR/LF/NUL in values are dropped (no response splitting).
enum ResponseHead {
    enum Framing: Equatable {
        case none
        case length(Int64)
        case chunked
        /// The body ends when the connection closes (HTTP/1.0 client, unknown length).
        case closeDelimited
    }

    static func serialize(_ response: HTTPResponse, framing: Framing, keepAlive: Bool, requestVersion: HTTPVersion,
                          date: [UInt8], into out: inout [UInt8]) {
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        let code = response.status.code
        out.append(UInt8(ascii: "0") + UInt8(code / 100 % 10))
        out.append(UInt8(ascii: "0") + UInt8(code / 10 % 10))
        out.append(UInt8(ascii: "0") + UInt8(code % 10))
        out.append(UInt8(ascii: " "))
        appendSafe(response.status.reason, to: &out)
        out.append(contentsOf: [13, 10])
        for (name, value) in response.headers {
            if isServerOwned(name) { continue }
            guard !name.isEmpty, name.utf8.allSatisfy(ASCII.isTokenChar),
                  value.utf8.allSatisfy({ $0 != 13 && $0 != 10 && $0 != 0 }) else { continue }
            out.append(contentsOf: name.utf8)
            out.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
            out.append(contentsOf: value.utf8)
            out.append(contentsOf: [13, 10])
        }
        out.append(contentsOf: date)
        switch framing {
        case .none, .closeDelimited: break
        case .length(let length):
            out.append(contentsOf: "Content-Length: ".utf8)
            out.append(contentsOf: String(length).utf8)
            out.append(contentsOf: [13, 10])
        case .chunked:
            out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
        }
        if code == 101 {
            out.append(contentsOf: "Connection: Upgrade\r\n".utf8)
        } else if !keepAlive {
            out.append(contentsOf: "Connection: close\r\n".utf8)
        } else if requestVersion == .http1_0 {
            out.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        out.append(contentsOf: [13, 10])
    }

    private static func isServerOwned(_ name: String) -> Bool {
        switch name.utf8.count {
        case 4: return ASCII.equalsIgnoringCase(name, "date")
        case 10: return ASCII.equalsIgnoringCase(name, "connection") || ASCII.equalsIgnoringCase(name, "keep-alive")
        case 14: return ASCII.equalsIgnoringCase(name, "content-length")
        case 17: return ASCII.equalsIgnoringCase(name, "transfer-encoding")
        default: return false
        }
    }

    private static func appendSafe(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 where byte >= 0x20 && byte != 0x7F { out.append(byte) }
    }

    static let continueLine: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
}
