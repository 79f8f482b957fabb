import Foundation

/// Small private files in the spool (the generated token, the session secret): read back trimmed, and written
/// whole or not at all, readable by the owner only.
///
/// A write goes to `<name>.tmp` with mode 0600, is fsynced, renamed over the file, and the directory is fsynced,
/// so after a crash the file holds the old text or the new one; a leftover `.tmp` is simply overwritten.
enum PrivateFile {
    /// The file's text with surrounding white space trimmed; nil when it is missing, empty or not UTF-8.
    static func load(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path),
              let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              !text.isEmpty else { return nil }
        return text
    }

    /// Replaces the file at `path` with `text` and a newline, mode 0600; durable when it returns.
    /// - Throws: `ServiceError.system` naming the call and the path that failed.
    static func save(_ text: String, at path: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServiceError.system("open \(temporary)", errno) }
        do {
            // A leftover temporary file keeps its old mode through O_TRUNC.
            guard fchmod(fd, 0o600) == 0 else { throw ServiceError.system("fchmod \(temporary)", errno) }
            let bytes = Array((text + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw ServiceError.system("write \(temporary)", written < 0 ? errno : EIO) }
            guard fsync(fd) == 0 else { throw ServiceError.system("fsync \(temporary)", errno) }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw ServiceError.system("rename \(temporary) to \(path)", code)
        }
        let directory = (path as NSString).deletingLastPathComponent
        let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw ServiceError.system("open \(directory)", errno) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw ServiceError.system("fsync \(directory)", errno) }
    }
}
