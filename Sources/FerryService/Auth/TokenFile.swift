import FerryStore
import Foundation
import Logging

/// The token Ferry makes for itself when it listens beyond loopback with none configured
/// (API.md: never an open proxy by accident). Kept in the spool with mode 0600 (`PrivateFile`) and
/// logged once, when it is made. With a store several nodes share, the nodes share one token, kept in the store's
/// `meta` table under the same name: the first node to start proposes its spool's token (or a new one).
enum TokenFile {
    static let name = "token"

    /// The spool's token, or with `shared` the store's.
    static func resolve(spool root: String, shared: (any ClusterJobStore)?, logger: Logger) async throws -> String {
        guard let shared else { return try loadOrCreate(spool: root, logger: logger) }
        let local = PrivateFile.load(root + "/" + name)
        let proposed = local ?? Secret.hex(Secret.randomBytes(24))
        let token = try await shared.firstValue(forKey: name, proposing: proposed)
        if local == nil, token == proposed {
            logger.warning("no token configured and listening beyond loopback: generated API token \(token) (kept in the store, the same on every node)")
        } else {
            logger.notice("no token configured; using the generated token kept in the store (the same on every node)")
        }
        return token
    }

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
