import CLinux
import Dispatch
import FerryCore
import Foundation

/// Writes one transfer's body into its partial file at explicit offsets and hashes it in file order.
///
/// Owns the descriptor, the digest (SHA-256, plus the algorithm of the job's `checksum` when another: one `Digest`
/// fed once), the record of written ranges and the segment sidecar file; every operation
/// runs on the writer's own serial queue, so disk I/O never runs on the engine queue. The digest itself lives on a
/// second serial queue (`digestQueue`), fed in the writer queue's order, so that on two cores hashing one run
/// overlaps writing the next (measured on a 2 GiB download from nginx on loopback, 3 interleaved rounds on a busy
/// 2-core machine: 472 MiB/s against 348 with hashing on the writer queue, and less CPU per byte together with
/// reused run buffers). Results are delivered on `callbackQueue` (the engine queue), in submission order.
///
/// Writes go to explicit offsets (`pwrite`), so the connections of a segmented download all write through one
/// writer into one preallocated file. The digest is computed in file order as the written prefix grows: a write
/// that lands exactly at the end of the hashed prefix is hashed from memory; when the prefix then reaches ranges
/// other segments wrote earlier, those are read back (from the page cache, where they still are: a split file is
/// never written with direct I/O, see `SpoolFileHandles.write`) and hashed on
/// `digestQueue`, in slices of 8 MiB that take turns with other writers' work on its lane; the writer queue never
/// waits for the digest.
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
/// Chunks arrive from libcurl in pieces (up to its receive buffer). `stage` gathers a burst of them (what one
/// libcurl action delivered) into one run (a `RunBuffer`, reused), written with one `pwrite` and hashed in one call, so that a fast download costs one
/// queue hop per run instead of per piece; the engine calls `flush` after every libcurl action, and every other
/// operation queues the staged run first, so the order of operations is the order of calls. Behind the writes,
/// write-back of what went through the page cache is started as `WriteBehind` says, so the disk works while the
/// download runs and the `fsync` at the end has little left to do.
///
/// Segment state (`partial/<id>.segments`, see `SegmentSidecar`) is written here too, so it is ordered with the
/// writes and truncations of the same file: the sidecar is created before the file is preallocated and removed
/// only after the file was emptied or completed and synced, so a preallocated file never lacks its sidecar (a
/// preallocated file alone would look like a complete download).
///
/// A writer made with `digestFirst: false` (a job nobody asked to verify) never lets the digest hold back the bytes
/// (issue 26): results are delivered from `queue` without waiting for `digestQueue`; a run continuing the hashed
/// prefix is hashed from memory only while at most `digestBacklogLimit` runs wait for the digest, and once it fell
/// behind (or the file was resumed, or is split) the rest is read back after `finishAhead` reported the file whole
/// and durable, on `digestQueue`, whose result comes later.
///
/// With `growing`, the writer publishes its gapless prefix there after every write (and when it opens, empties or
/// closes the file), for readers that stream the file while it downloads; while one watches, or when made
/// `pageCacheOnly` (fetch-through, whose bytes are always streamed), nothing is written with direct I/O, so those
/// readers read the page cache, not the disk.
final class FileWriter: @unchecked Sendable {
    let path: String
    /// Where the segment sidecar lives; nil when the writer never handles segmented downloads (tests).
    let segmentsPath: String?
    /// On a write lane of the spool (`DiskLanes`).
    private let queue: LaneQueue
    /// Owns `digest`: hashing a run overlaps writing the next one. Every operation of `queue` reaches it in the
    /// order of `queue`, always with `async` (the writer never waits for it: its results that need the digest are
    /// delivered from here, `deliver`), so results keep submission order and a run's buffer is reused only once it
    /// was hashed. On a digest lane of the spool (`DiskLanes`).
    let digestQueue: LaneQueue
    private let callbackQueue: DispatchQueue
    /// Results wait for the digest (a checksum to verify, a delivery): the behaviour before issue 26. When false,
    /// see the type's comment.
    let digestFirst: Bool
    /// Runs queued on `digestQueue` and not yet hashed (writers with `digestFirst` false). Guarded by `stagingLock`.
    private var digestBacklog = 0
    /// The most runs waiting for the digest before a writer with `digestFirst` false stops hashing from memory.
    static let digestBacklogLimit = 8
    /// The file's descriptors and the positional writes between them.
    private var file: SpoolFileHandles
    /// The buffered descriptor (-1 while closed): reads, page-cache writes, syncs.
    private var fd: Int32 { file.buffered }
    /// Held while the file is opened for creation: see `Spool.partialEntries`.
    private let creating: NSLock?
    /// This writer removed the segment sidecar and wrote none since (only the writer writes one): it is not there.
    private var sidecarRemoved = false
    /// The file is a split download (it has a segment sidecar): written through the page cache only, since its
    /// bytes past the hashed prefix are read back to hash them (`catchUp`), which a direct write would send to disk.
    private var split = false
    /// Where the gapless prefix is published, under the job's id.
    private let growing: (files: GrowingFiles, jobID: String)?
    /// Never write with direct I/O (see the type's comment).
    private let pageCacheOnly: Bool
    /// The prefix last published to `growing`.
    private var publishedPrefix: Int64 = -1
    /// Confined to `digestQueue`.
    private let digest: Digest
    /// Reading bytes back into `digest` failed since it was last reset: the finish hashes the whole file instead
    /// (and reports the failure when it recurs). Confined to `digestQueue`.
    private var readBackFailed = false
    /// Bytes [0, hashedUpTo) are in the digest, or queued for it on `digestQueue`.
    private var hashedUpTo: Int64 = 0
    /// A byte already hashed was written again: `finish` hashes the whole file instead.
    private var digestInvalid = false
    /// What has been written since the file was opened (or known written at opening).
    private var written = ContiguousPrefix()
    /// The first write failure; later writes are dropped.
    private var failure: SystemError?
    /// Bytes read back and hashed per block of `digestQueue`, so that a long read-back takes turns on its lane.
    static let readBackSlice: Int64 = 8 << 20
    /// When write-back is started, and a `pageCacheOnly` writer's dirty window.
    private var writeBehind = WriteBehind()

    /// A contiguous run of staged chunks, with each chunk's completion in order.
    private struct StagedRun {
        var buffer: RunBuffer?
        var offset: Int64 = 0
        var completions: [@Sendable (SystemError?) -> Void] = []
        var count: Int { buffer?.count ?? 0 }
        var end: Int64 { offset + Int64(count) }
    }
    /// Guards `staged` and `spareBuffers`: staging happens on the caller's queue, not on `queue`.
    private let stagingLock = NSLock()
    private var staged = StagedRun()
    /// Written and hashed runs' buffers, kept for later runs (see `RunBuffer`). Guarded by `stagingLock`; emptied
    /// when the file is closed.
    private var spareBuffers: [RunBuffer] = []
    /// Spare buffers kept: a run in flight per megabyte of the engine's write buffer (8 MiB), so a writer that
    /// fell behind and caught up again does not allocate.
    private static let spareLimit = 8
    /// The largest run; a longer burst is queued in several.
    static let stagingLimit = 1 << 20

    /// What `openPartial` found on disk.
    enum OpenedPartial: Equatable, Sendable {
        /// `bytes` contiguous bytes from offset 0 (hashed).
        case contiguous(bytes: Int64)
        /// A preallocated file with its segment state (the contiguous prefix hashed).
        case segmented(SegmentSidecar)
        /// Segment state that does not fit the file or the origin's validator: the file was emptied.
        case discarded(reason: String)
    }

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
        self.growing = growing
        self.pageCacheOnly = pageCacheOnly
        self.digestFirst = digestFirst
        self.creating = creating
        self.digest = Digest([.sha256] + algorithms)
        self.segmentsPath = segmentsPath
        let lanes = lanes ?? .alone("ferry.writer.\(label)")
        self.queue = lanes.writes.queue(label: "ferry.writer.\(label)")
        self.digestQueue = lanes.digests.queue(label: "ferry.digest.\(label)")
        self.callbackQueue = callbackQueue
    }

    /// Opens the partial file, creating it. With `keepExisting`, the bytes already there are kept and hashed first
    /// (resume) and their count is returned; otherwise the file is truncated to zero. (`openPartial` also says
    /// whether the file is a segmented download.)
    func open(keepExisting: Bool, completion: @escaping @Sendable (Result<Int64, SystemError>) -> Void) {
        openPartial(keepExisting: keepExisting, validator: nil, total: nil) { result in
            completion(result.map { opened in
                switch opened {
                case .contiguous(let bytes): return bytes
                case .segmented(let sidecar): return sidecar.table.bytesWritten
                case .discarded: return 0
                }
            })
        }
    }

    /// Opens the partial file, creating it, and says what it holds.
    ///
    /// Without `keepExisting` the file is emptied (and its segment state removed). Otherwise, when a segment
    /// sidecar is present and fits — it decodes, its size is the file's, its validator is `validator` (when
    /// given) and its total is `total` (when given) — the file is a segmented download in progress: its contiguous
    /// prefix is hashed and its written ranges remembered. A sidecar that does not fit means the bytes cannot be
    /// trusted: the file is emptied. Without a sidecar the bytes on disk are a contiguous prefix and are hashed. (Bytes
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
                    if created, let growing { growing.files.emptied(growing.jobID) }  // a new file: not a reader's
                }
                failure = nil
                split = false
                resetDigest(prefix: 0)
                guard keepExisting else {
                    try emptyFile(alreadyEmpty: created)
                    return .contiguous(bytes: 0)
                }
                var info = stat()
                guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
                let size = Int64(info.st_size)
                if let segmentsPath, let text = AtomicFile.read(segmentsPath) {
                    let sidecar = SegmentSidecar.decode(text)
                    guard let sidecar, sidecar.table.total == size, validator == nil || validator == sidecar.validator,
                          total == nil || total == sidecar.table.total else {
                        try emptyFile()
                        let reason = sidecar == nil ? "the saved segment state is unreadable" : "the saved segment state does not match the file"
                        return .discarded(reason: reason)
                    }
                    split = true
                    for segment in sidecar.table.segments where segment.next > segment.start {
                        written.insert(segment.start..<segment.next)
                    }
                    if digestFirst {
                        hashFile(length: written.prefix)
                        hashedUpTo = written.prefix
                    }
                    return .segmented(sidecar)
                }
                written.reset(prefix: size)
                if digestFirst {
                    hashFile(length: size)
                    hashedUpTo = size
                }
                return .contiguous(bytes: size)
            }
            if case .success = result { publishPrefix() }
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
        stagingLock.lock()
        defer { stagingLock.unlock() }
        if let buffer = staged.buffer, buffer.count > 0, staged.end != offset || buffer.room < bytes.count {
            queueStaged()
        }
        if staged.buffer == nil {
            staged.offset = offset
            let buffer = bytes.count <= Self.stagingLimit
                ? spareBuffers.popLast() ?? RunBuffer(capacity: Self.stagingLimit)
                : RunBuffer(capacity: bytes.count)  // a piece larger than a run (libcurl's are not): its own buffer
            buffer.reset(startingAt: offset)
            staged.buffer = buffer
        }
        staged.buffer?.append(bytes)
        staged.completions.append(completion)
    }

    /// Queues the staged run, if any, for writing.
    func flush() {
        stagingLock.withLock { queueStaged() }
    }

    /// Hands the staged run to `queue` (with `stagingLock` held, so runs queue in staging order).
    private func queueStaged() {
        guard let buffer = staged.buffer, buffer.count > 0 else { return }
        let (offset, completions) = (staged.offset, staged.completions)
        staged = StagedRun()
        queue.async { [self] in
            var hashing = false
            let error = writeAndHash(.run(buffer), at: offset, hashing: &hashing)
            guard digestFirst else {
                // A run being hashed is recycled by `digestQueue` once hashed (`hashWritten`).
                if !hashing { recycle(buffer) }
                callbackQueue.async { for completion in completions { completion(error) } }
                return
            }
            // On `digestQueue`, after the run was hashed: the buffer is free again.
            deliver(recycling: buffer) {
                for completion in completions { completion(error) }
            }
        }
    }

    /// Keeps a written (and hashed) run's buffer for a later run.
    private func recycle(_ buffer: RunBuffer) {
        guard buffer.capacity == Self.stagingLimit else { return }
        stagingLock.withLock {
            if spareBuffers.count < Self.spareLimit { spareBuffers.append(buffer) }
        }
    }

    /// Delivers a result on `callbackQueue` once the digest work queued before it ran (see `digestQueue`); with
    /// `recycling`, first keeps that run's buffer for a later run.
    /// Without `digestFirst`, delivers at once (from `queue`, so still in submission order).
    private func deliver(recycling buffer: RunBuffer? = nil, _ result: @escaping @Sendable () -> Void) {
        guard digestFirst else { return callbackQueue.async(execute: result) }
        digestQueue.async { [self] in
            if let buffer { recycle(buffer) }
            callbackQueue.async(execute: result)
        }
    }

    /// The first write failure, else the file's size once its bytes are durable (`fsync`). On `queue`.
    private func syncedSize() throws(SystemError) -> Int64 {
        if let failure { throw failure }
        guard fd >= 0 else { throw SystemError("fsync", path, errno: EBADF) }
        guard fsync(fd) == 0 else { throw SystemError("fsync", path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemError("fstat", path) }
        return Int64(info.st_size)
    }

    /// Makes the bytes durable and closes the file; returns its size and digests (SHA-256 and the algorithms asked
    /// for). Removes the segment sidecar once the bytes are synced. What was not hashed yet (bytes other segments
    /// wrote, or the whole file when the digest cannot be trusted) is read back on `digestQueue`, from a duplicate of
    /// the descriptor, and the result is delivered from there: the writer queue never waits for the digest.
    func finish(completion: @escaping @Sendable (Result<(size: Int64, digests: FileDigests), SystemError>) -> Void) {
        flush()
        queue.async { [self] in
            let synced = Result<TrailingDigest, SystemError> { () throws(SystemError) in
                let size = try syncedSize()
                let reader = dup(fd)
                guard reader >= 0 else { throw SystemError("dup", path) }
                let tail = TrailingDigest(descriptor: reader, path: path, hashedUpTo: digestInvalid ? nil : hashedUpTo, size: size)
                closeFile()
                // Complete and synced: the file no longer needs its segment state.
                if let segmentsPath, !sidecarRemoved { AtomicFile.remove(segmentsPath) }
                return tail
            }
            dropSpareBuffers()
            digestQueue.async { [self, callbackQueue] in
                let result = synced.flatMap { tail in complete(tail).map { (size: tail.size, digests: $0) } }
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
            var tail: TrailingDigest?
            let result = Result<Int64, SystemError> { () throws(SystemError) in
                let size = try syncedSize()
                let reader = dup(fd)
                guard reader >= 0 else { throw SystemError("dup", path) }
                tail = TrailingDigest(descriptor: reader, path: path, hashedUpTo: digestInvalid ? nil : hashedUpTo, size: size)
                closeFile()
                if let segmentsPath, !sidecarRemoved { AtomicFile.remove(segmentsPath) }
                return size
            }
            dropSpareBuffers()
            callbackQueue.async { completion(result) }
            guard let tail else { return }
            // Queued after `completion` (both end on the serial `callbackQueue`), so the digests come second.
            digestQueue.async { [self, callbackQueue] in
                let digests = complete(tail)
                callbackQueue.async { digested(digests) }
            }
        }
    }

    /// Closes the file keeping its bytes (pause, stop, failure) and reports how many are on disk.
    func close(completion: @escaping @Sendable (Int64) -> Void) {
        flush()
        queue.async { [self] in
            var size: Int64 = 0
            if fd >= 0 {
                _ = fdatasync(fd)
                var info = stat()
                if fstat(fd, &info) == 0 { size = Int64(info.st_size) }
                closeFile()
            } else {
                var info = stat()
                if stat(path, &info) == 0 { size = Int64(info.st_size) }
            }
            let bytes = size
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
                    try saveSidecar(sidecar)
                    try preallocate(sidecar.table.total)
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
                try saveSidecar(sidecar)
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
        guard pageCacheOnly, !split, let range = writeBehind.settle(prefix: written.prefix) else { return }
        _ = ferry_wait_writeback(fd, range.offset, range.length)
    }

    /// Tells `growing` the gapless prefix when it moved.
    private func publishPrefix() {
        guard let growing, written.prefix != publishedPrefix else { return }
        publishedPrefix = written.prefix
        growing.files.publish(growing.jobID, prefix: written.prefix)
    }

    /// Writes `bytes` at `offset` unless an earlier write failed, and has them hashed; returns the first failure.
    /// Starts write-back of the file as `WriteBehind` says.
    /// `hashing`: the bytes were queued on `digestQueue` to be hashed from memory.
    private func writeAndHash(_ bytes: WritePayload, at offset: Int64, hashing: inout Bool) -> SystemError? {
        guard failure == nil else { return failure }
        failure = bytes.withBytes { writeFully($0, at: offset) }
        guard failure == nil else { return failure }
        hashing = hashWritten(bytes, at: offset)
        publishPrefix()
        if writeBehind.wrote(Int64(bytes.count)) {
            _ = ferry_start_writeback(fd, 0, 0)  // advisory: a failure here shows at fsync
            settleDirtyWindow()
        }
        return nil
    }

    /// Hashes what a successful write made contiguous: the write itself from memory when it continues the hashed
    /// prefix (queued on `digestQueue`, overlapping the next write), then whatever earlier writes past it now
    /// joined the prefix, read back from the file. Without `digestFirst`, only while the digest keeps up (at most
    /// `digestBacklogLimit` runs waiting), and nothing is read back here (`finishAhead` does). Returns whether
    /// `bytes` were queued to be hashed.
    private func hashWritten(_ bytes: WritePayload, at offset: Int64) -> Bool {
        let end = offset + Int64(bytes.count)
        var hashing = false
        if offset == hashedUpTo, written.prefix == hashedUpTo, digestFirst || takeBacklogSlot() {
            hashing = true
            digestQueue.async { [self] in
                bytes.withBytes { digest.update($0) }
                guard !digestFirst else { return }
                if case .run(let buffer) = bytes { recycle(buffer) }
                stagingLock.withLock { digestBacklog -= 1 }
            }
            hashedUpTo = end
        } else if offset < hashedUpTo {
            digestInvalid = true
        }
        written.insert(offset..<end)
        if digestFirst { catchUp() }
        return hashing
    }

    /// Counts one more run waiting for the digest, unless `digestBacklogLimit` already wait.
    private func takeBacklogSlot() -> Bool {
        stagingLock.withLock {
            guard digestBacklog < Self.digestBacklogLimit else { return false }
            digestBacklog += 1
            return true
        }
    }

    /// Has the written prefix past `hashedUpTo` read back and hashed (bytes other segments wrote before the prefix
    /// reached them).
    private func catchUp() {
        guard written.prefix > hashedUpTo, !digestInvalid, fd >= 0 else { return }
        hashFile(from: hashedUpTo, length: written.prefix - hashedUpTo)
        hashedUpTo = written.prefix
    }

    /// Queues `length` bytes of the file from `start` to be read back and hashed on `digestQueue`, after the updates
    /// queued before, in slices of `readBackSlice` (a block each, so a long read-back takes turns on its lane), through
    /// a duplicate of the descriptor (the file may be closed meanwhile). A failure marks the digest `readBackFailed`.
    private func hashFile(from start: Int64 = 0, length: Int64) {
        guard length > 0 else { return }
        let reader = dup(fd)
        guard reader >= 0 else {
            digestInvalid = true  // `finish` hashes the whole file (and reports a failure there)
            return
        }
        let descriptor = ReadBackDescriptor(reader)
        let path = path
        for offset in stride(from: start, to: start + length, by: Int(Self.readBackSlice)) {
            let count = min(Self.readBackSlice, start + length - offset)
            digestQueue.async { [self] in
                guard !readBackFailed else { return }
                do throws(SystemError) {
                    try digest.update(fileDescriptor: descriptor.fd, offset: offset, length: count, path: path)
                } catch {
                    readBackFailed = true
                }
            }
        }
    }

    /// Completes the digest with `tail` (the whole file when a read-back failed), ready for reuse. On `digestQueue`.
    private func complete(_ tail: TrailingDigest) -> Result<FileDigests, SystemError> {
        let tail = readBackFailed ? TrailingDigest(descriptor: tail.descriptor, path: tail.path, hashedUpTo: nil, size: tail.size) : tail
        readBackFailed = false
        return tail.complete(digest)
    }

    /// Forgets the spare run buffers (the file is closed; a reopened one allocates anew).
    private func dropSpareBuffers() {
        digestQueue.async { [self] in stagingLock.withLock { spareBuffers.removeAll() } }
    }

    private func resetDigest(prefix: Int64) {
        digestQueue.async { [self] in
            digest.reset()
            readBackFailed = false
        }
        hashedUpTo = prefix
        writeBehind.restart()
        digestInvalid = false
        written.reset(prefix: prefix)
    }

    /// Truncates the file to zero (unless it was just created), then removes its segment state (in that order: see
    /// the type's comment).
    private func emptyFile(alreadyEmpty: Bool = false) throws(SystemError) {
        if !alreadyEmpty, fd >= 0, ftruncate(fd, 0) != 0 { throw SystemError("ftruncate", path) }
        if let growing {
            growing.files.emptied(growing.jobID)
            publishedPrefix = 0
        }
        if let segmentsPath {
            AtomicFile.remove(segmentsPath)
            sidecarRemoved = true
        }
        split = false
    }

    private func saveSidecar(_ sidecar: SegmentSidecar) throws(SystemError) {
        guard let segmentsPath else { return }
        sidecarRemoved = false
        split = true
        try AtomicFile.write(segmentsPath, sidecar.encoded())
    }

    private func preallocate(_ size: Int64) throws(SystemError) {
        try file.preallocate(size)
    }

    private func closeFile() {
        file.close()
        if let growing {
            growing.files.closed(growing.jobID)
            publishedPrefix = -1
        }
    }

    /// Writes `buffer` at `offset`, its block-aligned middle with direct I/O where this file may be (see
    /// `SpoolFileHandles.write`): not a split download, not a file read while it is written.
    private func writeFully(_ buffer: UnsafeRawBufferPointer, at offset: Int64) -> SystemError? {
        let direct = !split && !pageCacheOnly && (growing.map { !$0.files.isWatched($0.jobID) } ?? true)
        return file.write(buffer, at: offset, direct: direct)
    }
}
