import Dispatch
import Foundation

/// Writes one transfer's body into its partial file at explicit offsets and hashes it in file order.
///
/// Owns the descriptor and the digest; every operation runs on the writer's own serial queue, so disk I/O never
/// runs on the engine queue. Results are delivered on `callbackQueue` (the engine queue), in submission order.
/// Writes go to explicit offsets (`pwrite`), so several writers may later fill ranges of one file; the running
/// digest is only kept while writes arrive in order from offset 0, otherwise `finish` hashes the file.
final class FileWriter: @unchecked Sendable {
    let path: String
    private let queue: DispatchQueue
    private let callbackQueue: DispatchQueue
    private var fd: Int32 = -1
    private let digest = SHA256Digest()
    /// Bytes [0, hashedUpTo) are in the digest; -1 once writes arrived out of order.
    private var hashedUpTo: Int64 = 0
    /// The first write failure; later writes are dropped.
    private var failure: SystemError?

    init(path: String, label: String, callbackQueue: DispatchQueue) {
        self.path = path
        self.queue = DispatchQueue(label: "ferry.writer.\(label)")
        self.callbackQueue = callbackQueue
    }

    /// Opens the partial file, creating it. With `keepExisting`, the bytes already there are kept and hashed first
    /// (resume) and their count is returned; otherwise the file is truncated to zero.
    func open(keepExisting: Bool, completion: @escaping @Sendable (Result<Int64, SystemError>) -> Void) {
        queue.async { [self] in
            let result = Result<Int64, SystemError> { () throws(SystemError) -> Int64 in
                if fd < 0 {
                    fd = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
                    guard fd >= 0 else { throw SystemError("open", path) }
                }
                failure = nil
                digest.reset()
                hashedUpTo = 0
                guard keepExisting else {
                    guard ftruncate(fd, 0) == 0 else { throw SystemError("ftruncate", path) }
                    return 0
                }
                var info = stat()
                guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
                let size = Int64(info.st_size)
                try digest.update(fileDescriptor: fd, length: size, path: path)
                hashedUpTo = size
                return size
            }
            callbackQueue.async { completion(result) }
        }
    }

    /// Discards every byte (restart from zero): truncates the file and resets the digest.
    func truncate(completion: @escaping @Sendable (SystemError?) -> Void) {
        queue.async { [self] in
            var error: SystemError?
            if fd >= 0, ftruncate(fd, 0) != 0 { error = SystemError("ftruncate", path) }
            digest.reset()
            hashedUpTo = 0
            failure = error
            let result = error
            callbackQueue.async { completion(result) }
        }
    }

    /// Writes `bytes` at `offset`. The completion gets the first failure (also for writes after it).
    func write(_ bytes: [UInt8], at offset: Int64, completion: @escaping @Sendable (SystemError?) -> Void) {
        queue.async { [self] in
            if failure == nil {
                failure = writeFully(bytes, at: offset)
                if failure == nil {
                    if hashedUpTo == offset {
                        digest.update(bytes)
                        hashedUpTo += Int64(bytes.count)
                    } else {
                        hashedUpTo = -1
                    }
                }
            }
            let error = failure
            callbackQueue.async { completion(error) }
        }
    }

    /// Makes the bytes durable and closes the file; returns its size and SHA-256 (hex).
    func finish(completion: @escaping @Sendable (Result<(size: Int64, sha256: String), SystemError>) -> Void) {
        queue.async { [self] in
            let result = Result<(size: Int64, sha256: String), SystemError> { () throws(SystemError) in
                if let failure { throw failure }
                guard fd >= 0 else { throw SystemError("fsync", path, errno: EBADF) }
                guard fsync(fd) == 0 else { throw SystemError("fsync", path) }
                var info = stat()
                guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
                let size = Int64(info.st_size)
                let hex: String
                if hashedUpTo == size {
                    hex = digest.finalizeHex()
                } else {
                    let whole = SHA256Digest()
                    try whole.update(fileDescriptor: fd, length: size, path: path)
                    hex = whole.finalizeHex()
                }
                Foundation.close(fd)
                fd = -1
                return (size, hex)
            }
            callbackQueue.async { completion(result) }
        }
    }

    /// Closes the file keeping its bytes (pause, stop, failure) and reports how many are on disk.
    func close(completion: @escaping @Sendable (Int64) -> Void) {
        queue.async { [self] in
            var size: Int64 = 0
            if fd >= 0 {
                _ = fdatasync(fd)
                var info = stat()
                if fstat(fd, &info) == 0 { size = Int64(info.st_size) }
                Foundation.close(fd)
                fd = -1
            } else {
                var info = stat()
                if stat(path, &info) == 0 { size = Int64(info.st_size) }
            }
            let bytes = size
            callbackQueue.async { completion(bytes) }
        }
    }

    private func writeFully(_ bytes: [UInt8], at offset: Int64) -> SystemError? {
        guard fd >= 0 else { return SystemError("pwrite", path, errno: EBADF) }
        return bytes.withUnsafeBytes { buffer -> SystemError? in
            var done = 0
            while done < buffer.count {
                let n = pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
                if n < 0 {
                    if errno == EINTR { continue }
                    return SystemError("pwrite", path)
                }
                done += n
            }
            return nil
        }
    }
}
