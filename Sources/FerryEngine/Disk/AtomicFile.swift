import FerryCore
import Foundation

/// Small files replaced crash-safely: write a temp file (`<path>.tmp`), fsync it, rename it over the old one,
/// fsync the directory. A crash leaves the old file or the new one, never a mix; `Spool` removes leftover
/// `partial/*.tmp` files at start-up. Stateless; callers serialize writes to one path (a writer's queue).
enum AtomicFile {
    static func write(_ path: String, _ text: String) throws(SystemError) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", temporary) }
        guard DescriptorWriter.writeAll(fd, text) else {
            let error = SystemError("write", temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        guard fsync(fd) == 0 else {
            let error = SystemError("fsync", temporary)
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = SystemError("rename", path)
            unlink(temporary)
            throw error
        }
        try Spool.syncDirectory((path as NSString).deletingLastPathComponent)
    }

    /// The file's text, or nil when it is missing or unreadable.
    static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// Removes the file (a missing one is fine). Looks first: `unlink` takes the directory's lock for writing even
    /// when the name is absent, and most calls find nothing (a download that was never segmented), while file
    /// creations in the same directory wait for that lock.
    static func remove(_ path: String) {
        if access(path, F_OK) == 0 { unlink(path) }
    }
}
