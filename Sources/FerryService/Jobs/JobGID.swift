import CCrypto

/// A job's `gid` (the name aria2's RPC gives a download): 16 lower-case hex digits, the first 8 bytes of the SHA-256
/// of the job id. Derived, never stored, so it is fixed for the life of the job and the same on every node. Pure.
enum JobGID {
    static func of(_ id: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let bytes = Array(id.utf8)
        _ = bytes.withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, buffer.count, &digest, &length, EVP_sha256(), nil)
        }
        return Secret.hex(Array(digest.prefix(8)))
    }

    /// The gid `text` (16 hex digits, as `of` makes) as a number: lists and caches key jobs by it without hashing text.
    static func value(_ text: String) -> UInt64 {
        UInt64(text, radix: 16) ?? 0
    }

    /// The gid whose number is `value`: 16 lower-case hex digits, leading zeros kept (`of`'s form).
    static func text(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0, count: 16)
        for index in 0..<16 { out[index] = digits[Int((value >> UInt64(60 - 4 * index)) & 15)] }
        return String(decoding: out, as: UTF8.self)
    }

    /// Whether `text` has a gid's shape (16 hex digits, either case as aria2 accepts).
    static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { $0.isHexDigitASCII }
    }
}

private extension UInt8 {
    var isHexDigitASCII: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
