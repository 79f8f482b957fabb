import Foundation

/// Deterministic test content, files and temporary directories.
///
/// `content(size:seed:)` is the same byte stream the fault origin (`Tests/Fixtures/fault_origin.py`) serves:
/// a 65,521-byte block from xorshift32 seeded with `(seed * 2654435761 + 1) & 0xffffffff` (1 when that is 0),
/// byte = `state & 0xff` after each step, repeated to `size`. 65,521 is prime, so the pattern does not line up
/// with any power-of-two buffer size and misplaced chunks change the digest.
public enum Fixture {
    /// Length of the repeated block.
    public static let blockSize = 65_521

    /// The repeated block for `seed`.
    public static func block(seed: Int) -> [UInt8] {
        var state = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 1)
        if state == 0 { state = 1 }
        var block = [UInt8](repeating: 0, count: blockSize)
        for index in 0..<blockSize {
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            block[index] = UInt8(truncatingIfNeeded: state)
        }
        return block
    }

    /// `size` bytes of content for `seed`.
    public static func content(size: Int, seed: Int) -> [UInt8] {
        precondition(size >= 0, "size must not be negative")
        let block = block(seed: seed)
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBufferPointer { out in
            block.withUnsafeBufferPointer { source in
                var offset = 0
                while offset < size {
                    let count = min(blockSize, size - offset)
                    out.baseAddress!.advanced(by: offset).update(from: source.baseAddress!, count: count)
                    offset += count
                }
            }
        }
        return bytes
    }

    /// Writes `content(size:seed:)` to `path` (created or truncated, mode 0644) without holding it all in memory.
    public static func writeFile(at path: String, size: Int, seed: Int) throws {
        precondition(size >= 0, "size must not be negative")
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FixtureError.lastSystemCall("open", path) }
        defer { close(fd) }
        let block = block(seed: seed)
        try block.withUnsafeBytes { source in
            var offset = 0
            while offset < size {
                let count = min(blockSize, size - offset)
                var written = 0
                while written < count {
                    let n = write(fd, source.baseAddress!.advanced(by: written), count - written)
                    if n < 0 {
                        if errno == EINTR { continue }
                        throw FixtureError.lastSystemCall("write", path)
                    }
                    written += n
                }
                offset += count
            }
        }
    }

    /// Creates a fresh directory `<tmp>/<prefix>.XXXXXX` and returns its path. Remove it with `removeTree`.
    public static func tempDirectory(_ prefix: String) throws -> String {
        let base = FileManager.default.temporaryDirectory.path
        var template = Array("\(base)/\(prefix).XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw FixtureError.lastSystemCall("mkdtemp", "\(base)/\(prefix).XXXXXX")
        }
        return String(cString: made)
    }

    /// Removes `path` and everything under it; a missing path is not an error.
    public static func removeTree(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
