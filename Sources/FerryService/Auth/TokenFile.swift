import Foundation
import Logging

/// The token Ferry makes for itself when it listens beyond loopback with none configured
/// (API.md: never an open proxy by accident). Kept in the spool with mode 0600 (`PrivateFile`) and
/// logged once, when it is made.
enum TokenFile {
    static let name = "token"

    static func loadOrCreate(spool root: String, logger: Logger) throws -> String {
        let path = root + "/" + name
        if let token = PrivateFile.load(path) {
            logger.notice("no token configured; using the generated token kept in \(path)")
            return token
        }
        let token = Secret.hex(Secret.randomBytes(24))
        try PrivateFile.save(token, at: path)
        logger.warning("no token configured and listening beyond loopback: generated API token \(token) (kept in \(path))")
        return token
    }
}
