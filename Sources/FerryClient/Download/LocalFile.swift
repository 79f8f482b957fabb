import Foundation

/// A local file the client writes a download into: open, write at the end, truncate, sync, close. Errors carry
/// the call, the path and errno's text. Owned by one download; closed by `close()` or when released.
final class LocalFile {
    let path: String
    private var fd: Int32

    /// Opens (creating with mode 0644) for writing; the existing content is kept.
    init(writingTo path: String) throws(ClientError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.error("open", path) }
    }

    deinit { close() }

    /// Cuts the file to `length` bytes and places the write position there.
    func truncate(to length: Int64) throws(ClientError) {
        guard ftruncate(fd, off_t(length)) == 0 else { throw Self.error("ftruncate", path) }
        guard lseek(fd, off_t(length), SEEK_SET) >= 0 else { throw Self.error("lseek", path) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(ClientError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw Self.error("write", path)
            }
            offset += n
        }
    }

    func sync() throws(ClientError) {
        guard fsync(fd) == 0 else { throw Self.error("fsync", path) }
    }

    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// The size of a regular file at `path`; nil when there is none.
    static func size(of path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Whether `path` is a directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// SHA-256 of the first `length` bytes of the file at `path` (all of it when nil).
    static func digest(of path: String, length: Int64? = nil, into digest: inout SHA256) throws(ClientError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path) }
        defer { Glibc.close(fd) }
        var remaining = length ?? Int64.max
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while remaining > 0 {
            let want = Int(min(Int64(buffer.count), remaining))
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, want) }
            if n < 0 {
                if errno == EINTR { continue }
                throw error("read", path)
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            remaining -= Int64(n)
        }
    }

    private static func error(_ call: String, _ path: String) -> ClientError {
        .file(call: call, path: path, reason: String(cString: strerror(errno)))
    }
}
