import CLinux
import FerryCore
import Foundation

/// The digest of one `FileWriter`'s file, computed in file order as its written prefix grows: how far it got,
/// whether it can still be trusted, and the read-back of bytes that other segments wrote before the prefix reached
/// them.
///
/// A write that lands exactly at the end of the hashed prefix is hashed from memory; when the prefix then reaches
/// ranges other segments wrote earlier, those are read back (from the page cache, where they still are: a split
/// file is never written with direct I/O, see `SpoolFileHandles.write`) and hashed on `queue`, in slices of 8 MiB
/// that take turns with other writers' work on its lane. Without `digestFirst`, a run continuing the hashed prefix
/// is hashed from memory only while at most `backlogLimit` runs wait for the digest, and once it fell behind (or
/// the file was resumed, or is split) the rest is read back by `complete`.
///
/// Why a queue of its own: on two cores hashing one run overlaps writing the next (measured on a 2 GiB download
/// from nginx on loopback, 3 interleaved rounds on a busy 2-core machine: 472 MiB/s against 348 with hashing on
/// the writer queue, and less CPU per byte together with reused run buffers).
///
/// Why not hash once at the end: measured on a 1 GiB download from nginx on loopback with 4 connections (release
/// build, 2 cores shared with other busy jobs, 5 interleaved runs per batch, medians of 4 batches), hashing as the
/// prefix grows finished in 3.51 / 3.35 / 4.32 / 3.05 s against 3.82 / 3.81 / 4.97 / 3.53 s for hashing at the
/// end — 0.3 to 0.65 s sooner per GiB in every batch — with equal or less CPU (2.19 / 2.17 / 2.47 / 2.48 s against
/// 2.51 / 2.27 / 2.78 / 2.46 s), since only what other segments wrote is read back, not the whole file. On
/// loopback all segments grow together, so most of the hashing still waits for the first segment to finish; on a
/// real network, where the download is the bottleneck and work stealing keeps the prefix moving, more of it
/// overlaps the download, and a file that has left the page cache is never read back from disk at the end.
///
/// Two halves on two queues. `hashedUpTo` and `invalid` belong to the writer's queue, where every method but
/// `complete` is called. The `Digest` and `readBackFailed` belong to `queue` (the writer's digest queue), reached
/// only by blocks queued there in the writer queue's order, and by `complete`, which runs there. The backlog count
/// of a writer without `digestFirst` has a lock of its own: a slot is taken on the writer's queue and given back on
/// `queue`.
final class FileOrderDigest: @unchecked Sendable {
    /// The digest's queue (a digest lane of the spool, `DiskLanes`).
    let queue: LaneQueue
    /// Results wait for the digest (see `FileWriter`): every write continuing the prefix is hashed from memory and
    /// what other segments wrote is read back as soon as the prefix reaches it. Without it, a run is hashed from
    /// memory only while at most `backlogLimit` wait, and nothing is read back before `complete`.
    let digestFirst: Bool
    /// The most runs waiting for the digest before a writer with `digestFirst` false stops hashing from memory.
    static let backlogLimit = 8
    /// Bytes read back and hashed per block of `queue`, so that a long read-back takes turns on its lane.
    static let readBackSlice: Int64 = 8 << 20

    /// The file's path, for errors.
    private let path: String
    /// Confined to `queue`.
    private let digest: Digest
    /// Reading bytes back into `digest` failed since it was last reset: `complete` hashes the whole file instead
    /// (and reports the failure when it recurs). Confined to `queue`.
    private var readBackFailed = false
    /// Bytes [0, hashedUpTo) are in the digest, or queued for it on `queue`.
    private(set) var hashedUpTo: Int64 = 0
    /// A byte already hashed was written again (or could not be read back): the whole file is hashed at the end.
    private(set) var invalid = false
    private let backlogLock = NSLock()
    /// Runs queued on `queue` and not yet hashed (without `digestFirst`). Guarded by `backlogLock`.
    private var backlog = 0

    init(path: String, queue: LaneQueue, algorithms: [DigestAlgorithm], digestFirst: Bool) {
        self.path = path
        self.queue = queue
        self.digestFirst = digestFirst
        self.digest = Digest([.sha256] + algorithms)
    }

    /// Starts again with bytes [0, prefix) counted as hashed (0: the file was opened or emptied).
    func reset(prefix: Int64) {
        queue.async { [self] in
            digest.reset()
            readBackFailed = false
        }
        hashedUpTo = prefix
        invalid = false
    }

    /// Notes a successful write of `bytes` at `offset`, the gapless prefix being at `prefix` before it: when the
    /// write continues the hashed prefix, queues it on `queue` to be hashed from memory (overlapping the next write;
    /// without `digestFirst` only while the digest keeps up, and `recycle` then gets a run's buffer back once
    /// hashed); a write before `hashedUpTo` invalidates the digest. Returns whether `bytes` were queued.
    /// (A run's buffer may be reused as soon as it was hashed: its count is read before it is queued.)
    func hash(_ bytes: WritePayload, at offset: Int64, prefix: Int64,
              recycle: @escaping @Sendable (RunBuffer) -> Void) -> Bool {
        let end = offset + Int64(bytes.count)
        if offset == hashedUpTo, prefix == hashedUpTo, digestFirst || takeBacklogSlot() {
            queue.async { [self] in
                bytes.withBytes { digest.update($0) }
                guard !digestFirst else { return }
                if case .run(let buffer) = bytes { recycle(buffer) }
                backlogLock.withLock { backlog -= 1 }
            }
            hashedUpTo = end
            return true
        }
        if offset < hashedUpTo { invalid = true }
        return false
    }

    /// With `digestFirst`, has the written prefix past `hashedUpTo` (up to `prefix`) read back through `fd` and
    /// hashed: bytes written before the prefix reached them.
    func catchUp(to prefix: Int64, fd: Int32) {
        guard digestFirst, prefix > hashedUpTo, !invalid, fd >= 0 else { return }
        readBack(from: hashedUpTo, length: prefix - hashedUpTo, fd: fd)
        hashedUpTo = prefix
    }

    /// What is left to hash once the file, `size` bytes, is complete, read back through `descriptor` (a duplicate
    /// of the writer's, which `complete` closes).
    func trailing(descriptor: Int32, size: Int64) -> TrailingDigest {
        TrailingDigest(descriptor: descriptor, path: path, hashedUpTo: invalid ? nil : hashedUpTo, size: size)
    }

    /// Completes the digest with `tail` (the whole file when a read-back failed), ready for reuse. On `queue`.
    func complete(_ tail: TrailingDigest) -> Result<FileDigests, SystemError> {
        let tail = readBackFailed ? TrailingDigest(descriptor: tail.descriptor, path: tail.path, hashedUpTo: nil, size: tail.size) : tail
        readBackFailed = false
        return tail.complete(digest)
    }

    /// Counts one more run waiting for the digest, unless `backlogLimit` already wait.
    private func takeBacklogSlot() -> Bool {
        backlogLock.withLock {
            guard backlog < Self.backlogLimit else { return false }
            backlog += 1
            return true
        }
    }

    /// Queues `length` bytes of the file from `start` to be read back and hashed on `queue`, after the updates
    /// queued before, in slices of `readBackSlice` (a block each, so a long read-back takes turns on its lane),
    /// through a duplicate of `fd` (the file may be closed meanwhile). A failure marks the digest `readBackFailed`.
    private func readBack(from start: Int64, length: Int64, fd: Int32) {
        let reader = dup(fd)
        guard reader >= 0 else {
            invalid = true  // the finish hashes the whole file (and reports a failure there)
            return
        }
        let descriptor = ReadBackDescriptor(reader)
        let path = path
        for offset in stride(from: start, to: start + length, by: Int(Self.readBackSlice)) {
            let count = min(Self.readBackSlice, start + length - offset)
            queue.async { [self] in
                guard !readBackFailed else { return }
                do throws(SystemError) {
                    try digest.update(fileDescriptor: descriptor.fd, offset: offset, length: count, path: path)
                } catch {
                    readBackFailed = true
                }
            }
        }
    }
}
