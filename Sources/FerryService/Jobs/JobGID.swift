import CCrypto

/// A job's `gid` (the name aria2's RPC gives a download): 16 lower-case hex digits, the first 8 bytes of the SHA-256
/// of the job id. Derived, never stored, so it is fixed for the life of the job and the same on every node. Pure.
enum JobGID {
    static func of(_ id: String) -> String {
        var id = id
        let value: UInt64 = id.withUTF8 { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { digest in
                var length: UInt32 = 0
                _ = EVP_Digest(bytes.baseAddress, bytes.count, digest.baseAddress, &length, sha256, nil)
                return digest.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
        return text(value)
    }

    /// SHA-256, fetched once: `EVP_sha256()` makes `EVP_Digest` look the implementation up on every call, which was
    /// 4% of the CPU of a `GET /api/v1/jobs/{id}` (every job object shows its gid). Immutable once fetched.
    private nonisolated(unsafe) static let sha256 = EVP_MD_fetch(nil, "SHA256", nil)

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
