import Foundation

/// Writes a whole buffer to a file descriptor with `write(2)`, again after a short write or `EINTR`. Stateless;
/// shared by the client's console and the engine's small crash-safe files.
public enum DescriptorWriter {
    /// Writes every byte of `text`; false when `write(2)` failed (then `errno` says why).
    public static func writeAll(_ fd: Int32, _ text: String) -> Bool {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress! + done, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += n
            }
            return true
        }
    }
}
