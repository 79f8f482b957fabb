import Foundation
import Logging

/// The token Ferry makes for itself when it listens beyond loopback with none configured
/// (API.md: never an open proxy by accident). Kept in the spool with mode 0600 and logged once,
/// when it is made.
enum TokenFile {
    static let name = "token"

    static func loadOrCreate(spool root: String, logger: Logger) throws -> String {
        let path = root + "/" + name
        if let data = FileManager.default.contents(atPath: path),
           let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
           !text.isEmpty {
            logger.notice("no token configured; using the generated token kept in \(path)")
            return text
        }
        let token = Secret.hex(Secret.randomBytes(24))
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ServiceError.system("open \(temporary)", errno) }
        let line = Array((token + "\n").utf8)
        let written = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        guard written == line.count, rename(temporary, path) == 0 else { throw ServiceError.system("write \(path)", errno) }
        logger.warning("no token configured and listening beyond loopback: generated API token \(token) (kept in \(path))")
        return token
    }
}

/// A failure to start or run the service, carrying the call that failed.
public enum ServiceError: Error, CustomStringConvertible {
    case system(String, Int32)
    case startup(String)

    public var description: String {
        switch self {
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .startup(let why): why
        }
    }
}
