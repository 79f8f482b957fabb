/// The grammar of a request's lines (RFC 9112): the request line, a field line, a chunk-size line, and a decimal
/// length. Pure functions over the line's bytes (without its CRLF); used by `RequestParser`.
enum RequestSyntax {
    /// 1*DIGIT, at most 18 digits (no sign, no spaces, no overflow).
    static func length(_ text: Substring) -> Int? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= 18 else { return nil }
        var value = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    struct RequestLine {
        var method: HTTPMethod
        var target: String
        var version: HTTPVersion
    }

    static func requestLine(_ line: UnsafeBufferPointer<UInt8>) -> Result<RequestLine, RequestParseError> {
        let bad = { (message: String) in Result<RequestLine, RequestParseError>.failure(RequestParseError(.badRequest, message)) }
        var i = 0
        while i < line.count, ASCII.isTokenChar(line[i]) { i += 1 }
        guard i > 0, i < line.count, line[i] == ASCII.space else { return bad("invalid method") }
        let methodEnd = i
        i += 1
        let targetStart = i
        while i < line.count, ASCII.isTargetChar(line[i]) { i += 1 }
        guard i > targetStart, i < line.count, line[i] == ASCII.space else { return bad("invalid request target") }
        let targetEnd = i
        i += 1
        let version = UnsafeBufferPointer(rebasing: line[i...])
        guard version.count == 8,
              version[0] == UInt8(ascii: "H"), version[1] == UInt8(ascii: "T"), version[2] == UInt8(ascii: "T"),
              version[3] == UInt8(ascii: "P"), version[4] == UInt8(ascii: "/"), version[6] == UInt8(ascii: "."),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(version[5]),
              (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(version[7])
        else { return bad("invalid HTTP version") }
        let httpVersion: HTTPVersion
        switch (version[5], version[7]) {
        case (UInt8(ascii: "1"), UInt8(ascii: "0")): httpVersion = .http1_0
        case (UInt8(ascii: "1"), _): httpVersion = .http1_1
        case (UInt8(ascii: "0"), _): return bad("invalid HTTP version")
        default: return .failure(RequestParseError(.versionNotSupported, "only HTTP/1.x is supported"))
        }

        let target = UnsafeBufferPointer(rebasing: line[targetStart..<targetEnd])
        let method = HTTPMethod(rawValue: String(decoding: UnsafeBufferPointer(rebasing: line[0..<methodEnd]), as: UTF8.self))
        if target[0] == UInt8(ascii: "/") {
            // origin-form
        } else if target.count == 1 && target[0] == UInt8(ascii: "*") {
            guard method == .OPTIONS else { return bad("asterisk-form is only for OPTIONS") }
        } else if !isAbsoluteForm(target) {
            return bad("invalid request target")
        }
        guard hasValidPercentEncoding(target) else { return bad("invalid percent-encoding in request target") }
        return .success(RequestLine(method: method, target: String(decoding: target, as: UTF8.self), version: httpVersion))
    }

    static func isAbsoluteForm(_ target: UnsafeBufferPointer<UInt8>) -> Bool {
        for scheme in ["http://", "https://"] {
            let bytes = Array(scheme.utf8)
            if target.count > bytes.count,
               zip(target.prefix(bytes.count), bytes).allSatisfy({ ASCII.lowercased($0) == $1 }) {
                return true
            }
        }
        return false
    }

    static func hasValidPercentEncoding(_ target: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while i < target.count {
            if target[i] == UInt8(ascii: "%") {
                guard i + 2 < target.count, ASCII.hexValue(target[i + 1]) != nil, ASCII.hexValue(target[i + 2]) != nil
                else { return false }
                i += 3
            } else {
                i += 1
            }
        }
        return true
    }

    static func field(_ line: UnsafeBufferPointer<UInt8>) -> Result<(name: String, value: String), RequestParseError> {
        if line[0] == ASCII.space || line[0] == ASCII.tab {
            return .failure(RequestParseError(.badRequest, "obsolete line folding"))
        }
        var i = 0
        while i < line.count, ASCII.isTokenChar(line[i]) { i += 1 }
        guard i < line.count, line[i] == ASCII.colon else {
            if i < line.count, line[i] == ASCII.space || line[i] == ASCII.tab {
                return .failure(RequestParseError(.badRequest, "whitespace before the colon of a header field"))
            }
            return .failure(RequestParseError(.badRequest, "invalid header field name"))
        }
        guard i > 0 else { return .failure(RequestParseError(.badRequest, "empty header field name")) }
        let nameEnd = i
        i += 1
        while i < line.count, line[i] == ASCII.space || line[i] == ASCII.tab { i += 1 }
        var end = line.count
        while end > i, line[end - 1] == ASCII.space || line[end - 1] == ASCII.tab { end -= 1 }
        for j in i..<end where !ASCII.isFieldValueChar(line[j]) {
            return .failure(RequestParseError(.badRequest, line[j] == ASCII.cr ? "bare CR in header field" : "invalid character in header field value"))
        }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[0..<nameEnd]), as: UTF8.self)
        let value = String(decoding: UnsafeBufferPointer(rebasing: line[i..<end]), as: UTF8.self)
        return .success((name: name, value: value))
    }

    /// chunk-size [ BWS ";" chunk-ext ]: 1 to 16 hex digits, no overflow; nil when malformed.
    static func chunkSize(_ line: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        var value = 0
        while i < line.count, let digit = ASCII.hexValue(line[i]) {
            guard i < 16 else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 16)
            guard !overflow else { return nil }
            value = shifted + digit
            guard value >= 0 else { return nil }
            i += 1
        }
        guard i > 0 else { return nil }
        if i == line.count { return value }
        while i < line.count, line[i] == ASCII.space || line[i] == ASCII.tab { i += 1 }
        guard i < line.count, line[i] == UInt8(ascii: ";") else { return nil }
        for j in i..<line.count where !ASCII.isFieldValueChar(line[j]) { return nil }
        return value
    }
}
