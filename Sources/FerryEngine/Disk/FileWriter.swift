import CLinux
import Dispatch
import FerryCore
import Foundation

/// Writes one transfer's body into its partial file at explicit offsets and hashes it in file order.
///
/// Owns the descriptor, the record of written ranges, the segment sidecar (`SegmentStateFile`), the file-order
/// digest (`FileOrderDigest`: SHA-256, plus the algorithm of the job's `checksum` when another) and the run buffers
/// (`RunStaging`). Every operation runs on the writer's own serial queue, so disk I/O never runs on the engine
/// queue; the digest lives on a second serial queue (`digestQueue`), fed in the writer queue's order, so that
/// hashing one run overlaps writing the next and the writer queue never waits for it. Results are delivered on
/// `callbackQueue` (the engine queue), in submission order.
///
/// Writes go to explicit offsets (`pwrite`), so the connections of a segmented download all write through one
/// writer into one preallocated file. Chunks arrive from libcurl in pieces (up to its receive buffer): `stage`
/// gathers a burst of them (what one libcurl action delivered) into one run, written with one `pwrite` and hashed
/// in one call, so that a fast download costs one queue hop per run instead of per piece; the engine calls `flush`
/// after every libcurl action, and every other operation queues the staged run first, so the order of operations
/// is the order of calls. Behind the writes, write-back of what went through the page cache is started as
/// `WriteBehind` says, so the disk works while the download runs and the `fsync` at the end has little left to do.
///
/// Segment state (`partial/<id>.segments`) is written here too, so it is ordered with the writes and truncations
/// of the same file: the sidecar is created before the file is preallocated and removed only after the file was
/// emptied or completed and synced, so a preallocated file never lacks its sidecar (a preallocated file alone
/// would look like a complete download).
///
/// A writer made with `digestFirst: false` (a job nobody asked to verify) never lets the digest hold back the bytes
/// (issue 26): results are delivered from `queue` without waiting for `digestQueue`, and what the digest did not
/// hash from memory is read back after `finishAhead` reported the file whole and durable, on `digestQueue`, whose
/// result comes later.
///
/// With `growing` (`GrowingPrefix`), the writer publishes its gapless prefix there after every write (and when it
/// opens, empties or closes the file), for readers that stream the file while it downloads; while one watches, or
/// when made `pageCacheOnly` (fetch-through, whose bytes are always streamed), nothing is written with direct I/O,
/// so those readers read the page cache, not the disk.
final class FileWriter: @unchecked Sendable {
    let path: String
    /// On a write lane of the spool (`DiskLanes`).
    private let queue: LaneQueue
    /// Owns the digest (`hasher`'s): hashing a run overlaps writing the next one. Every operation of `queue` reaches
    /// it in the order of `queue`, always with `async` (the writer never waits for it: its results that need the
    /// digest are delivered from here, `deliver`), so results keep submission order and a run's buffer is reused only
    /// once it was hashed. On a digest lane of the spool (`DiskLanes`).
    let digestQueue: LaneQueue
    private let callbackQueue: DispatchQueue
    /// Results wait for the digest (a checksum to verify, a delivery): the behaviour before issue 26. When false,
    /// see the type's comment.
    let digestFirst: Bool
    /// The file-order digest: its bookkeeping on `queue`, the digest itself on `digestQueue`.
    private let hasher: FileOrderDigest
    /// The file's descriptors and the positional writes between them.
    private var file: SpoolFileHandles
    /// The buffered descriptor (-1 while closed): reads, page-cache writes, syncs.
    private var fd: Int32 { file.buffered }
    /// Held while the file is opened for creation: see `Spool.partialEntries`.
    private let creating: NSLock?
    /// The segment sidecar, and whether the file is split.
    private var segments: SegmentStateFile
    /// Where the gapless prefix is published, under the job's id.
    private var growing: GrowingPrefix?
    /// Never write with direct I/O (see the type's comment).
    private let pageCacheOnly: Bool
    /// What has been written since the file was opened (or known written at opening).
    private var written = ContiguousPrefix()
    /// The first write failure; later writes are dropped.
    private var failure: SystemError?
    /// When write-back is started, and a `pageCacheOnly` writer's dirty window.
    private var writeBehind = WriteBehind()

    /// The staged run and the spare run buffers (its own lock: staging happens on the caller's queue, not on
    /// `queue`); the spares are dropped when the file is closed.
    let staging = RunStaging()

    /// What `openPartial` found on disk.
    typealias OpenedPartial = PartialOnDisk

    /// - Parameters:
    ///   - algorithms: what the digest computes besides SHA-256 (the job's `checksum` algorithm).
    ///   - creating: held while the file is opened for creation (`Spool.partialEntries`).
    ///   - digestFirst: whether results wait for the digest (see the type's comment).
    ///   - growing: where to publish the gapless prefix, under which job id.
    ///   - pageCacheOnly: never write with direct I/O.
    ///   - lanes: where the writer's two queues run (`Spool.lanes`); nil: a lane of each of its own.
    init(path: String, segmentsPath: String? = nil, label: String, callbackQueue: DispatchQueue, algorithms: [DigestAlgorithm] = [],
         creating: NSLock? = nil, digestFirst: Bool = true, growing: (files: GrowingFiles, jobID: String)? = nil,
         pageCacheOnly: Bool = false, lanes: DiskLanes.Pair? = nil) {
        self.path = path
        self.file = SpoolFileHandles(path: path)
        self.growing = growing.map { GrowingPrefix(files: $0.files, jobID: $0.jobID) }
        self.pageCacheOnly = pageCacheOnly
        self.digestFirst = digestFirst
        self.creating = creating
        self.segments = SegmentStateFile(path: segmentsPath)
        let lanes = lanes ?? .alone("ferry.writer.\(label)")
        self.queue = lanes.writes.queue(label: "ferry.writer.\(label)")
        self.digestQueue = lanes.digests.queue(label: "ferry.digest.\(label)")
        self.hasher = FileOrderDigest(path: path, queue: digestQueue, algorithms: algorithms, digestFirst: digestFirst)
        self.callbackQueue = callbackQueue
    }

    /// Opens the partial file, creating it. With `keepExisting`, the bytes already there are kept and hashed first
    /// (resume) and their count is returned; otherwise the file is truncated to zero. (`openPartial` also says
    /// whether the file is a segmented download.)
    func open(keepExisting: Bool, completion: @escaping @Sendable (Result<Int64, SystemError>) -> Void) {
        openPartial(keepExisting: keepExisting, validator: nil, total: nil) { result in
            completion(result.map(\.bytesKept))
        }
    }

    /// Opens the partial file, creating it, and says what it holds.
    ///
    /// Without `keepExisting` the file is emptied (and its segment state removed). Otherwise the file is judged by
    /// its segment sidecar (`PartialOnDisk.judge`): a segmented download in progress has its contiguous prefix
    /// hashed and its written ranges remembered; a sidecar that does not fit means the bytes cannot be trusted: the
    /// file is emptied. Without a sidecar the bytes on disk are a contiguous prefix and are hashed. (Bytes
    /// to hash are read back on `digestQueue`, and a writer with `digestFirst` has its answer once they were; a read
    /// failure there shows at the finish, which hashes the whole file again.)
    func openPartial(keepExisting: Bool, validator: String?, total: Int64?, completion: @escaping @Sendable (Result<OpenedPartial, SystemError>) -> Void) {
        flush()
        queue.async { [self] in
            let result = Result<OpenedPartial, SystemError> { () throws(SystemError) -> OpenedPartial in
                var created = false
                if fd < 0 {
                    // Exclusively first: a file this call creates is known empty (no truncation needed).
                    creating?.lock()
                    defer { creating?.unlock() }
                    created = try file.open()
                    if created { growing?.created() }  // a new file: not a reader's
                }
                failure = nil
                segments.split = false
                resetDigest(prefix: 0)
                guard keepExisting else {
                    try emptyFile(alreadyEmpty: created)
                    return .contiguous(bytes: 0)
                }
                let size = try file.size()
                let found = PartialOnDisk.judge(sidecar: segments.read(), size: size, validator: validator, total: total)
                switch found {
                case .contiguous:
                    written.reset(prefix: size)
                case .segmented(let sidecar):
                    segments.split = true
                    for segment in sidecar.table.segments where segment.next > segment.start {
                        written.insert(segment.start..<segment.next)
                    }
                case .discarded:
                    try emptyFile()
                    return found
                }
                hasher.catchUp(to: written.prefix, fd: fd)
                return found
            }
            if case .success = result { growing?.publish(written.prefix) }
            deliver { completion(result) }
        }
    }

    /// Discards every byte (restart from zero): truncates the file and resets the digest.
    func truncate(completion: @escaping @Sendable (SystemError?) -> Void) {
        flush()
        queue.async { [self] in
            var problem: SystemError?
            do throws(SystemError) { try emptyFile() } catch { problem = error }
            resetDigest(prefix: 0)
            failure = problem
            let result = problem
            deliver { completion(result) }
        }
    }

    /// Writes `bytes` at `offset`. The completion gets the first failure (also for writes after it).
    func write(_ bytes: [UInt8], at offset: Int64, completion: @escaping @Sendable (SystemError?) -> Void) {
        flush()
        queue.async { [self] in
            var hashing = false
            let error = writeAndHash(.array(bytes), at: offset, hashing: &hashing)
            deliver { completion(error) }
        }
    }

    /// Copies `bytes`, to be written at `offset`, into the staged run (queuing the run first when `bytes` does not
    /// continue it or it is full). Nothing reaches the disk before `flush` or the next other operation. The
    /// completion gets the first failure, as `write`'s does. Call from one queue at a time (the engine queue).
    func stage(_ bytes: UnsafeRawBufferPointer, at offset: Int64, completion: @escaping @Sendable (SystemError?) -> Void) {
        staging.stage(bytes, at: offset, completion: completion, ship: queueRun)
    }

    /// Queues the staged run, if any, for writing.
    func flush() {
        staging.flush(ship: queueRun)
    }

    /// Queues a staged run on `queue` (called by `staging` with its lock held, so runs queue in staging order).
    private func queueRun(_ run: RunStaging.Run) {
        let (buffer, offset, completions) = (run.buffer, run.offset, run.completions)
        queue.async { [self] in
            var hashing = false
            let error = writeAndHash(.run(buffer), at: offset, hashing: &hashing)
            guard digestFirst else {
                // A run being hashed is recycled by `digestQueue` once hashed (`FileOrderDigest.hash`).
                if !hashing { staging.recycle(buffer) }
                callbackQueue.async { for completion in completions { completion(error) } }
                return
            }
            // On `digestQueue`, after the run was hashed: the buffer is free again.
            deliver(recycling: buffer) {
                for completion in completions { completion(error) }
            }
        }
    }

    /// Delivers a result on `callbackQueue` once the digest work queued before it ran (see `digestQueue`); with
    /// `recycling`, first keeps that run's buffer for a later run.
    /// Without `digestFirst`, delivers at once (from `queue`, so still in submission order).
    private func deliver(recycling buffer: RunBuffer? = nil, _ result: @escaping @Sendable () -> Void) {
        guard digestFirst else { return callbackQueue.async(execute: result) }
        digestQueue.async { [self] in
            if let buffer { staging.recycle(buffer) }
            callbackQueue.async(execute: result)
        }
    }

    /// Unless a write failed (its failure is thrown), makes the bytes durable, closes the file and removes its
    /// segment state (complete and synced, it no longer needs it); returns what is left of the digest, through a
    /// duplicate of the descriptor. On `queue`.
    private func completeFile() throws(SystemError) -> TrailingDigest {
        if let failure { throw failure }
        let size = try file.syncedSize()
        let reader = dup(fd)
        guard reader >= 0 else { throw SystemError("dup", path) }
        let tail = hasher.trailing(descriptor: reader, size: size)
        closeFile()
        segments.removeOnCompletion()
        return tail
    }

    /// Makes the bytes durable and closes the file; returns its size and digests (SHA-256 and the algorithms asked
    /// for). Removes the segment sidecar once the bytes are synced. What was not hashed yet (bytes other segments
    /// wrote, or the whole file when the digest cannot be trusted) is read back on `digestQueue`, from a duplicate of
    /// the descriptor, and the result is delivered from there: the writer queue never waits for the digest.
    func finish(completion: @escaping @Sendable (Result<(size: Int64, digests: FileDigests), SystemError>) -> Void) {
        flush()
        queue.async { [self] in
            let synced = Result<TrailingDigest, SystemError> { () throws(SystemError) in try completeFile() }
            dropSpareBuffers()
            digestQueue.async { [hasher, callbackQueue] in
                let result = synced.flatMap { tail in hasher.complete(tail).map { (size: tail.size, digests: $0) } }
                callbackQueue.async { completion(result) }
            }
        }
    }

    /// Makes the bytes durable and closes the file, and reports its size without waiting for the digest; the digests
    /// follow through `digested` (on `callbackQueue`), once what was not hashed from memory is read back on
    /// `digestQueue` (from a duplicate of the descriptor: the file may be moved meanwhile). `completion` always
    /// comes first. Removes the segment sidecar once the bytes are synced. For a writer with `digestFirst`, this is
    /// `finish`, the digests right after the size.
    func finishAhead(completion: @escaping @Sendable (Result<Int64, SystemError>) -> Void,
                     digested: @escaping @Sendable (Result<FileDigests, SystemError>) -> Void) {
        guard !digestFirst else {
            return finish { result in
                completion(result.map(\.size))
                if case .success(let finished) = result { digested(.success(finished.digests)) }
            }
        }
        flush()
        queue.async { [self] in
            let synced = Result<TrailingDigest, SystemError> { () throws(SystemError) in try completeFile() }
            dropSpareBuffers()
            callbackQueue.async { completion(synced.map(\.size)) }
            guard case .success(let tail) = synced else { return }
            // Queued after `completion` (both end on the serial `callbackQueue`), so the digests come second.
            digestQueue.async { [hasher, callbackQueue] in
                let digests = hasher.complete(tail)
                callbackQueue.async { digested(digests) }
            }
        }
    }

    /// Closes the file keeping its bytes (pause, stop, failure) and reports how many are on disk.
    func close(completion: @escaping @Sendable (Int64) -> Void) {
        flush()
        queue.async { [self] in
            let bytes = file.keptSize()
            if fd >= 0 { closeFile() }
            dropSpareBuffers()
            deliver { completion(bytes) }
        }
    }

    // MARK: segmented downloads

    /// Starts a segmented download: stores its segment state, then preallocates the file to `sidecar.table.total`
    /// bytes (so the sidecar exists before the file has gaps). A failure also fails every later write.
    func prepareSegments(_ sidecar: SegmentSidecar, completion: @escaping @Sendable (SystemError?) -> Void) {
        flush()
        queue.async { [self] in
            if failure == nil {
                do throws(SystemError) {
                    try segments.save(sidecar)
                    try file.preallocate(sidecar.table.total)
                } catch {
                    failure = error
                }
            }
            let error = failure
            deliver { completion(error) }
        }
    }

    /// Stores segment state, after syncing the file so that every write it counts is durable first (the caller
    /// counts only writes whose completion it has seen, which ran before this on the same queue).
    func saveSegments(_ sidecar: SegmentSidecar, completion: @escaping @Sendable (SystemError?) -> Void) {
        flush()
        queue.async { [self] in
            var result: SystemError?
            do throws(SystemError) {
                if fd >= 0, fdatasync(fd) != 0 { throw SystemError("fdatasync", path) }
                try segments.save(sidecar)
            } catch {
                result = error
            }
            let error = result
            deliver { completion(error) }
        }
    }

    // MARK: helpers (on `queue`)

    /// Keeps a `pageCacheOnly` writer's dirty bytes within `WriteBehind.dirtyWindow` of its gapless prefix, waiting
    /// for the write-back of what lies further behind (a split file is never one). A failure shows at `fsync`.
    private func settleDirtyWindow() {
        guard pageCacheOnly, !segments.split, let range = writeBehind.settle(prefix: written.prefix) else { return }
        _ = ferry_wait_writeback(fd, range.offset, range.length)
    }

    /// Writes `bytes` at `offset` unless an earlier write failed, and has them hashed; returns the first failure.
    /// Starts write-back of the file as `WriteBehind` says.
    /// `hashing`: the bytes were queued on `digestQueue` to be hashed from memory.
    private func writeAndHash(_ bytes: WritePayload, at offset: Int64, hashing: inout Bool) -> SystemError? {
        guard failure == nil else { return failure }
        failure = bytes.withBytes { writeFully($0, at: offset) }
        guard failure == nil else { return failure }
        // Counted first: once queued to be hashed, a run's buffer may be hashed, recycled and staged again.
        let count = Int64(bytes.count)
        hashing = hashWritten(bytes, at: offset, count: count)
        growing?.publish(written.prefix)
        if writeBehind.wrote(count) {
            _ = ferry_start_writeback(fd, 0, 0)  // advisory: a failure here shows at fsync
            settleDirtyWindow()
        }
        return nil
    }

    /// Hashes what a successful write made contiguous: the write itself from memory when it continues the hashed
    /// prefix, then (with `digestFirst`) whatever earlier writes past it now joined the prefix, read back from the
    /// file (`FileOrderDigest`). Returns whether `bytes` were queued to be hashed.
    private func hashWritten(_ bytes: WritePayload, at offset: Int64, count: Int64) -> Bool {
        let hashing = hasher.hash(bytes, at: offset, prefix: written.prefix, recycle: staging.recycle)
        written.insert(offset..<offset + count)
        hasher.catchUp(to: written.prefix, fd: fd)
        return hashing
    }

    /// Forgets the spare run buffers (the file is closed; a reopened one allocates anew), after the runs queued for
    /// the digest were hashed.
    private func dropSpareBuffers() {
        digestQueue.async { [staging] in staging.dropSpares() }
    }

    private func resetDigest(prefix: Int64) {
        hasher.reset(prefix: prefix)
        writeBehind.restart()
        written.reset(prefix: prefix)
    }

    /// Truncates the file to zero (unless it was just created), then removes its segment state (in that order: see
    /// the type's comment).
    private func emptyFile(alreadyEmpty: Bool = false) throws(SystemError) {
        if !alreadyEmpty, fd >= 0, ftruncate(fd, 0) != 0 { throw SystemError("ftruncate", path) }
        growing?.emptied()
        segments.remove()
    }

    private func closeFile() {
        file.close()
        growing?.closed()
    }

    /// Writes `buffer` at `offset`, its block-aligned middle with direct I/O where this file may be (see
    /// `SpoolFileHandles.write`): not a split download, not a file read while it is written.
    private func writeFully(_ buffer: UnsafeRawBufferPointer, at offset: Int64) -> SystemError? {
        let direct = !segments.split && !pageCacheOnly && !(growing?.isWatched ?? false)
        return file.write(buffer, at: offset, direct: direct)
    }
}
