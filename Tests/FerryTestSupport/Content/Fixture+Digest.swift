import CCrypto
import Foundation

extension Fixture {
    /// Lower-case hex SHA-256 of `bytes`.
    public static func sha256Hex(of bytes: [UInt8]) -> String {
        let digest = SHA256Digest()
        bytes.withUnsafeBytes { digest.update($0) }
        return digest.finishHex()
    }

    /// Lower-case hex SHA-256 of the file at `path`, read in 1 MiB chunks.
    public static func sha256Hex(ofFile path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FixtureError.lastSystemCall("open", path) }
        defer { close(fd) }
        let digest = SHA256Digest()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FixtureError.lastSystemCall("read", path)
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { digest.update(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
        return digest.finishHex()
    }
}
