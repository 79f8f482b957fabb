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
