/// A JSON error response per API.md: `{"error":{"code":"...","message":"..."}}`.
public func errorResponse(_ status: HTTPStatus, code: String, message: String, headers: HTTPHeaders = [:]) -> HTTPResponse {
    var body: [UInt8] = []
    body.reserveCapacity(40 + code.utf8.count + message.utf8.count)
    body.append(contentsOf: #"{"error":{"code":"#.utf8)
    JSONText.appendString(code, to: &body)
    body.append(contentsOf: #","message":"#.utf8)
    JSONText.appendString(message, to: &body)
    body.append(contentsOf: "}}".utf8)
    var response = HTTPResponse.json(status, body)
    for (name, value) in headers { response.headers[name] = value }
    return response
}

/// Minimal JSON string encoding, enough for error bodies (no Foundation).
enum JSONText {
    static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
