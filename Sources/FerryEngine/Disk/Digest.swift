import CCrypto
import FerryCore
import Foundation

/// An incremental digest over OpenSSL's EVP interface, of one or more algorithms fed the same bytes at once.
///
/// A transfer's file is hashed once, in file order, whatever it is checked against: SHA-256 always (the job's
/// `sha256`), plus the algorithm of its `checksum` when that is another one. One EVP context per algorithm.
///
/// Not thread-safe: owned by whoever feeds it (a `FileWriter` updates it on its queue, in file order).
final class Digest {
    /// The algorithms computed, without repeats, in the order given.
    let algorithms: [DigestAlgorithm]
    private let contexts: [OpaquePointer]

    /// - Parameter algorithms: what to compute (repeats ignored); empty means SHA-256.
    init(_ algorithms: [DigestAlgorithm] = [.sha256]) {
        var unique: [DigestAlgorithm] = []
        for algorithm in algorithms.isEmpty ? [.sha256] : algorithms where !unique.contains(algorithm) {
            unique.append(algorithm)
        }
        self.algorithms = unique
        self.contexts = unique.map { _ in
            guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed (out of memory)") }
            return context
        }
        reset()
    }

    deinit { contexts.forEach { EVP_MD_CTX_free($0) } }

    /// libcrypto's description of an algorithm.
    static func evp(_ algorithm: DigestAlgorithm) -> OpaquePointer? {
        switch algorithm {
        case .sha256: EVP_sha256()
        case .sha512: EVP_sha512()
        case .sha1: EVP_sha1()
        case .md5: EVP_md5()
        }
    }

    /// Starts over, as if nothing had been hashed.
    func reset() {
        for (algorithm, context) in zip(algorithms, contexts) {
            guard EVP_DigestInit_ex(context, Self.evp(algorithm), nil) == 1 else {
                fatalError("EVP_DigestInit_ex(\(algorithm.rawValue)) failed")
            }
        }
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        for context in contexts { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
    }

    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digests of everything fed so far. The digest must be reset before reuse.
    func finalize() -> FileDigests {
        var hex: [DigestAlgorithm: String] = [:]
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        for (algorithm, context) in zip(algorithms, contexts) {
            var length: UInt32 = 0
            EVP_DigestFinal_ex(context, &output, &length)
            hex[algorithm] = Self.lowercaseHex(output.prefix(Int(length)))
        }
        return FileDigests(hex: hex)
    }

    /// `bytes` as lowercase hex digits (what `String(format: "%02x")` per byte gives, without a formatter per byte).
    static func lowercaseHex(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
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

    /// The digests of a whole file.
    static func ofFile(_ path: String, algorithms: [DigestAlgorithm] = [.sha256]) throws(SystemError) -> FileDigests {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
        let digest = Digest(algorithms)
        try digest.update(fileDescriptor: fd, length: Int64(info.st_size), path: path)
        return digest.finalize()
    }
}

/// The digests of one file as lowercase hex, by algorithm (what a `Digest` computed).
struct FileDigests: Sendable, Equatable {
    let hex: [DigestAlgorithm: String]

    /// The SHA-256, which every transfer's digest computes (empty when this one did not).
    var sha256: String { hex[.sha256] ?? "" }

    /// Whether the file has the digest `checksum` expects; false when that algorithm was not computed.
    func matches(_ checksum: Checksum) -> Bool { hex[checksum.algorithm] == checksum.value }
}
