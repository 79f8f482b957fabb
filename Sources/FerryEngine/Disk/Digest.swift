import CCrypto
import Foundation

/// An incremental SHA-256 over OpenSSL's EVP interface.
///
/// Not thread-safe: owned by whoever feeds it (a `FileWriter` updates it on its queue, in file order).
final class SHA256Digest {
    private let context: OpaquePointer

    init() {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed (out of memory)") }
        self.context = context
        reset()
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Starts over, as if nothing had been hashed.
    func reset() {
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { fatalError("EVP_DigestInit_ex(sha256) failed") }
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything fed so far, as lowercase hex. The digest must be reset before reuse.
    func finalizeHex() -> String {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return output.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// Hashes the first `length` bytes of an open file into this digest (resume: what is already on disk).
    func update(fileDescriptor fd: Int32, length: Int64, path: String) throws(SystemError) {
        try update(fileDescriptor: fd, offset: 0, length: length, path: path)
    }

    /// Hashes `length` bytes of an open file from `start` into this digest.
    func update(fileDescriptor fd: Int32, offset start: Int64, length: Int64, path: String) throws(SystemError) {
        var buffer = [UInt8](repeating: 0, count: Int(min(1 << 20, max(length, 1))))
        var offset = start
        let end = start + length
        while offset < end {
            let wanted = Int(min(Int64(buffer.count), end - offset))
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(offset)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw SystemError("pread", path)
            }
            if got == 0 { throw SystemError("pread", path, errno: EIO) }  // file shorter than expected
            buffer.withUnsafeBytes { update(UnsafeRawBufferPointer(rebasing: $0.prefix(got))) }
            offset += Int64(got)
        }
    }

    /// The SHA-256 of a whole file, as lowercase hex.
    static func hex(ofFile path: String) throws(SystemError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
        let digest = SHA256Digest()
        try digest.update(fileDescriptor: fd, length: Int64(info.st_size), path: path)
        return digest.finalizeHex()
    }
}
