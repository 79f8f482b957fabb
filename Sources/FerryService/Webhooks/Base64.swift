import CCrypto

/// Standard base64 (RFC 4648, with padding) through OpenSSL's `EVP_EncodeBlock` / `EVP_DecodeBlock`.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        var out = [UInt8](repeating: 0, count: (bytes.count + 2) / 3 * 4 + 1)
        let length = EVP_EncodeBlock(&out, bytes, Int32(bytes.count))
        return String(decoding: out.prefix(Int(length)), as: UTF8.self)
    }

    /// The bytes of padded base64 text; nil when it is not (a length that is not a multiple of 4, a character
    /// outside the alphabet, padding in the middle).
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard !input.isEmpty else { return [] }
        guard input.count % 4 == 0 else { return nil }
        let padding = input.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
        guard padding <= 2, !input.dropLast(padding).contains(UInt8(ascii: "=")) else { return nil }
        var out = [UInt8](repeating: 0, count: input.count / 4 * 3)
        // EVP_DecodeBlock skips leading and trailing white space; none is allowed here.
        guard !input.contains(where: { $0 <= 0x20 }) else { return nil }
        let length = EVP_DecodeBlock(&out, input, Int32(input.count))
        guard length >= 0 else { return nil }
        // It decodes the padding as zero bytes: drop them.
        return Array(out.prefix(Int(length) - padding))
    }
}
