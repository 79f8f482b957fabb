import CLinux
import FerryCore
import Foundation

/// The descriptors of one spool file being written, and the positional writes that choose between them: `buffered`
/// (reads, page-cache writes, syncs) and the same file opened with `O_DIRECT` for the block-aligned middle of large
/// writes (-1 where the file system refuses direct I/O: then every byte goes through `buffered`).
///
/// A value owned by its `FileWriter`, used only on that writer's queue.
struct SpoolFileHandles {
    let path: String
    /// -1 while closed.
    private(set) var buffered: Int32 = -1
    private var direct: Int32 = -1

    /// The smallest block-aligned middle of a run written with `O_DIRECT`.
    static let directMinimum: Int64 = 256 << 10

    init(path: String) {
        self.path = path
    }

    /// Opens the file, creating it when missing; true when this call created it (so it is known empty). The
    /// exclusive create comes first, so that of two openers only one is told it created the file.
    mutating func open() throws(SystemError) -> Bool {
        buffered = Foundation.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        let created = buffered >= 0
        if buffered < 0, errno == EEXIST { buffered = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard buffered >= 0 else { throw SystemError("open", path) }
        direct = Foundation.open(path, O_WRONLY | O_CLOEXEC | ferry_o_direct())  // -1: buffered only
        return created
    }

    mutating func close() {
        if buffered >= 0 { Foundation.close(buffered) }
        buffered = -1
        if direct >= 0 { Foundation.close(direct) }
        direct = -1
    }

    /// The open file's size.
    func size() throws(SystemError) -> Int64 {
        var info = stat()
        guard fstat(buffered, &info) == 0 else { throw SystemError("fstat", path) }
        return Int64(info.st_size)
    }

    /// The file's size once its bytes are durable (`fsync`).
    func syncedSize() throws(SystemError) -> Int64 {
        guard buffered >= 0 else { throw SystemError("fsync", path, errno: EBADF) }
        guard fsync(buffered) == 0 else { throw SystemError("fsync", path) }
        return try size()
    }

    /// The size of the file kept as it is (pause, stop, failure): when open, after its data was synced (best
    /// effort); when closed, the size at `path`; 0 when unknown.
    func keptSize() -> Int64 {
        var info = stat()
        if buffered >= 0 {
            _ = fdatasync(buffered)
            return fstat(buffered, &info) == 0 ? Int64(info.st_size) : 0
        }
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Reserves the file's blocks (`posix_fallocate`, which also sets the size); where the file system cannot,
    /// only sets the size.
    func preallocate(_ size: Int64) throws(SystemError) {
        guard buffered >= 0 else { throw SystemError("posix_fallocate", path, errno: EBADF) }
        let code = posix_fallocate(buffered, 0, off_t(size))
        if code == 0 { return }
        if code == EOPNOTSUPP || code == EINVAL {
            guard ftruncate(buffered, off_t(size)) == 0 else { throw SystemError("ftruncate", path) }
            return
        }
        throw SystemError("posix_fallocate", path, errno: code)
    }

    /// Writes `buffer` at `offset`: when `direct` allows it, its block-aligned middle with direct I/O if the memory
    /// is aligned like the file (a `RunBuffer` is), the unaligned head and tail through the page cache.
    ///
    /// Why direct I/O: on this kind of machine (2-core VM, ext4 on virtio) copying into the page cache was the
    /// largest single cost of a download, a third to 40% of Ferry's CPU, as it is of `curl -o`'s; then write-back
    /// and the final `fsync` write it out anyway. A direct write hands the pages to the disk without that copy:
    /// `dd` of 2 GiB took 0.19 s of CPU and 1.2 s with `oflag=direct`, against 3.6 s and 2.6 s buffered + `sync`.
    /// The file then is not in the page cache; reading it back (catch-up hashing, serving) reads the disk. Mixing
    /// both kinds of write on one file is coherent (the kernel writes back and drops cached pages a direct write
    /// covers), and `fsync` on either descriptor covers both. A file system that refuses (`EINVAL`) turns direct
    /// writes off for this file.
    ///
    /// Only a middle of `directMinimum` bytes or more goes direct: a direct write waits for the disk, which a large
    /// run pays back by the copy it spares, a run of a few pages (many slow connections) not.
    mutating func write(_ buffer: UnsafeRawBufferPointer, at offset: Int64, direct allowed: Bool) -> SystemError? {
        guard buffered >= 0 else { return SystemError("pwrite", path, errno: EBADF) }
        guard allowed, direct >= 0, let base = buffer.baseAddress else { return writeAll(buffered, buffer, at: offset) }
        let alignment = Int64(RunBuffer.alignment)
        let end = offset + Int64(buffer.count)
        let middleStart = (offset + alignment - 1) / alignment * alignment
        let middleEnd = end / alignment * alignment
        let headCount = Int(middleStart - offset)
        guard middleEnd - middleStart >= Self.directMinimum, Int(bitPattern: base + headCount) % RunBuffer.alignment == 0 else {
            return writeAll(buffered, buffer, at: offset)
        }
        let head = UnsafeRawBufferPointer(rebasing: buffer[..<headCount])
        let middle = UnsafeRawBufferPointer(rebasing: buffer[headCount..<Int(middleEnd - offset)])
        let tail = UnsafeRawBufferPointer(rebasing: buffer[Int(middleEnd - offset)...])
        if let error = writeAll(buffered, head, at: offset) { return error }
        if let error = writeAll(direct, middle, at: middleStart) {
            guard error.code == EINVAL else { return error }
            Foundation.close(direct)  // refused here: page cache from now on
            direct = -1
            if let error = writeAll(buffered, middle, at: middleStart) { return error }
        }
        return writeAll(buffered, tail, at: middleEnd)
    }

    private func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer, at offset: Int64) -> SystemError? {
        var done = 0
        while done < buffer.count {
            let n = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                return SystemError("pwrite", path)
            }
            done += n
        }
        return nil
    }
}
