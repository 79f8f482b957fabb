/// Percent-decoding and -encoding on bytes, shared by URL, filename and Content-Disposition parsing.
enum PercentEncoding {
    /// `text` with every `%XX` (two hex digits) replaced by its byte; other `%` signs are kept as they are
    /// (as the WHATWG URL standard does).
    static func decode<S: Sequence>(_ text: S) -> [UInt8] where S.Element == UInt8 {
        decode(Array(text), strict: false) ?? []
    }

    /// Strict decoding for RFC 8187 values: `nil` when a `%` is not followed by two hex digits.
    static func decodeStrict<S: Sequence>(_ text: S) -> [UInt8]? where S.Element == UInt8 {
        decode(Array(text), strict: true)
    }

    /// The one decoder: a `%` without two hex digits is kept (lenient) or makes the whole value invalid (strict).
    private static func decode(_ bytes: [UInt8], strict: Bool) -> [UInt8]? {
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == 37 {
                if i + 2 < bytes.count, let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                    result.append(high << 4 | low)
                    i += 3
                    continue
                }
                if strict { return nil }
            }
            result.append(bytes[i])
            i += 1
        }
        return result
    }

    /// `bytes` with every byte for which `keep` is false written as `%XX` (uppercase hex).
    static func encode<S: Sequence>(_ bytes: S, keeping keep: (UInt8) -> Bool) -> String where S.Element == UInt8 {
        var result: [UInt8] = []
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in bytes {
            if keep(byte) {
                result.append(byte)
            } else {
                result.append(37)
                result.append(hex[Int(byte >> 4)])
                result.append(hex[Int(byte & 0xf)])
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }
}
