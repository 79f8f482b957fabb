import FerryStore
import Foundation

/// A few MiB of the spool's file system held back for the job store.
///
/// Downloads can fill a disk to the last byte (free space is checked once a second; a burst can
/// outrun it). SQLite then cannot write state changes, or even open its WAL at start-up, and Ferry
/// could neither record `disk_full` nor start. The ballast is a preallocated file in the spool: when
/// the store reports it is out of space (or Ferry starts on a full disk) the ballast is deleted,
/// which gives SQLite room to write; it is laid down again once free space is back above the reserve.
///
/// Thread-safe: its lock guards the file's creation and removal.
final class StoreBallast: @unchecked Sendable {
    let path: String
    let size: Int64
    private let lock = NSLock()

    /// - Parameter size: bytes to hold back; by default 1% of the file system, at least 256 KiB (room for
    ///   a few hundred state changes) and at most 8 MiB, so a small volume is not eaten by it.
    init(spoolRoot: String, size: Int64? = nil) {
        path = spoolRoot + "/.store-ballast"
        self.size = size ?? Self.defaultSize(fileSystemBytes: Self.fileSystemBytes(at: spoolRoot))
    }

    static func defaultSize(fileSystemBytes: Int64?) -> Int64 {
        guard let total = fileSystemBytes else { return 1 << 20 }
        return min(8 << 20, max(256 << 10, total / 100))
    }

    private static func fileSystemBytes(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_blocks) * Int64(info.f_frsize)
    }

    var isPresent: Bool {
        var info = stat()
        return stat(path, &info) == 0 && Int64(info.st_blocks) * 512 >= size
    }

    /// Lays the ballast down (really allocated, not sparse) when it is missing. Returns whether it is there.
    @discardableResult
    func ensure() -> Bool {
        lock.withLock {
            if isPresent { return true }
            let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return false }
            let allocated = posix_fallocate(fd, 0, off_t(size)) == 0 && fsync(fd) == 0
            close(fd)
            if !allocated { unlink(path) }
            return allocated
        }
    }

    /// Deletes the ballast; true when that freed space (it was there).
    @discardableResult
    func release() -> Bool {
        lock.withLock { unlink(path) == 0 }
    }
}
