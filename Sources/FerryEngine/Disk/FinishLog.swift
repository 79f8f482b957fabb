import FerryCore
import Foundation

/// An append-only file of finish record groups (`partial/<uuid>.finishes`): each group moved into `files/` appends
/// its records (`FinishRecordGroup.encoded`) and syncs them with one `fdatasync`, so a group costs no new file, no
/// rename and no directory sync; only creating the log syncs `partial/`. The file is open only while a group is
/// appended (no descriptor stays open between groups or after shutdown).
///
/// Only the end of the file can be torn by a crash (a group is appended once its links are durable, and its partial
/// files are unlinked only after the append is synced); `FinishRecordGroup.decodeLog` keeps every whole group before
/// it. A failed append is cut off again. Not thread-safe: `Spool` guards its log with `logLock`.
final class FinishLog {
    let path: String
    /// Bytes of whole groups in the file.
    private(set) var size: Int64 = 0

    /// Creates a new, empty log in `directory` and makes its name durable.
    init(directory: String) throws(SystemError) {
        path = directory + "/" + UUID().uuidString.lowercased() + ".finishes"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open", path) }
        close(fd)
        do throws(SystemError) {
            try Spool.syncDirectory(directory)
        } catch {
            unlink(path)
            throw error
        }
    }

    /// Appends a group and syncs it. On failure the file is cut back to its whole groups (best effort: a torn end is
    /// also dropped when read).
    func append(_ group: FinishRecordGroup) throws(SystemError) {
        let text = group.encoded
        let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path) }
        defer { close(fd) }
        guard DescriptorWriter.writeAll(fd, text) else {
            let error = SystemError("write", path)
            _ = ftruncate(fd, off_t(size))
            throw error
        }
        guard fdatasync(fd) == 0 else {
            let error = SystemError("fdatasync", path)
            _ = ftruncate(fd, off_t(size))
            throw error
        }
        size += Int64(text.utf8.count)
    }
}
