import FerryCore
import Foundation

/// The part of a finished file's digest still to be computed after the file was reported whole and durable
/// (`FileWriter.finishAhead`): the bytes past what was hashed from memory, read back through a descriptor of its
/// own (the file may be moved into `files/` meanwhile; the descriptor follows it).
///
/// A value handed to the writer's digest queue, which owns the `Digest` it completes; `complete` closes the
/// descriptor.
struct TrailingDigest: Sendable {
    let descriptor: Int32
    let path: String
    /// Bytes [0, hashedUpTo) are already in the digest (or queued for it before this); nil when the digest cannot
    /// be trusted (a hashed byte was written again): the whole file is hashed anew.
    let hashedUpTo: Int64?
    let size: Int64

    /// Feeds the rest of the file to `digest` and returns its digests; resets `digest` for reuse either way.
    func complete(_ digest: Digest) -> Result<FileDigests, SystemError> {
        defer {
            close(descriptor)
            digest.reset()
        }
        let start: Int64
        if let hashedUpTo, hashedUpTo <= size {
            start = hashedUpTo
        } else {
            digest.reset()
            start = 0
        }
        do throws(SystemError) {
            try digest.update(fileDescriptor: descriptor, offset: start, length: size - start, path: path)
        } catch {
            return .failure(error)
        }
        return .success(digest.finalize())
    }
}

/// A duplicate of a writer's descriptor for reading bytes back on its digest queue; closed when the last slice
/// holding it is done.
final class ReadBackDescriptor: Sendable {
    let fd: Int32
    init(_ fd: Int32) { self.fd = fd }
    deinit { close(fd) }
}
