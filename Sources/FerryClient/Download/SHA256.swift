import CCrypto

/// SHA-256 fed in pieces of any size, over OpenSSL's EVP interface (as the service's digest is): `get` checks a
/// downloaded file against the job's digest with it. A value owned by the one caller feeding it; no I/O.
///
/// Copies share one running digest (the context is a reference), so feed and finish one value only.
public struct SHA256: Sendable {
    /// The EVP context, freed with the last copy.
    private final class Context: @unchecked Sendable {
        let pointer: OpaquePointer
        init() {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed (out of memory)") }
            guard EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1 else { fatalError("EVP_DigestInit_ex(sha256) failed") }
            self.pointer = pointer
        }
        deinit { EVP_MD_CTX_free(pointer) }
    }

    private let context = Context()

    public init() {}

    /// Adds bytes to the message.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        EVP_DigestUpdate(context.pointer, base, bytes.count)
    }

    /// Adds bytes to the message.
    public mutating func update<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// The digest of everything added, as 64 lower-case hex digits. The value is spent afterwards.
    public mutating func finishHex() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in finish() {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The 32-byte digest of everything added. The value is spent afterwards.
    public mutating func finish() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context.pointer, &output, &length)
        return Array(output.prefix(Int(length)))
    }

    /// Hex digest of `bytes` in one call.
    public static func hex<Bytes: Collection>(of bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var digest = SHA256()
        digest.update(bytes)
        return digest.finishHex()
    }
}
