import Foundation
import Logging

/// The session secret: together with the API token it keys the MAC of the page's session cookies
/// (`SessionCookie`). Kept in the spool as `session-secret` (mode 0600, `PrivateFile`) and made at the first
/// start with a token.
///
/// Rotating it ends every session at once, without changing the token: stop Ferry, delete the file, start Ferry;
/// a new secret is made and the start-up log says so. An operator may also write a secret of their own (at least
/// `minimumLength` characters). Ferry replaces it by itself when more logouts must be remembered than
/// `RevokedSessions` holds (see `Sessions`). With a PostgreSQL store the nodes share one secret, kept in the store's
/// `meta` table under this name (`Sessions.open`); the spool's file then only seeds it at the first start.
enum SessionSecret {
    static let name = "session-secret"
    /// The fewest characters accepted from the file; a generated secret has 64 (32 random bytes in hex).
    static let minimumLength = 32

    static func path(spool: String) -> String { spool + "/" + name }

    /// The secret kept in the spool, made (and logged) when there is none.
    /// - Throws: `ServiceError.startup` when the file holds a secret too short to trust; `ServiceError.system` when a
    ///   new one cannot be written.
    static func loadOrCreate(spool: String, logger: Logger) throws -> String {
        let path = path(spool: spool)
        if let secret = load(spool: spool) {
            guard secret.count >= minimumLength else {
                throw ServiceError.startup("\(path) holds a session secret of \(secret.count) characters, fewer than "
                    + "\(minimumLength); delete the file and Ferry makes a new one")
            }
            return secret
        }
        let secret = try replace(spool: spool)
        logger.notice("made a new session secret in \(path): session cookies issued before no longer work")
        return secret
    }

    /// The secret kept in `spool`, if any (not checked).
    static func load(spool: String) -> String? { PrivateFile.load(path(spool: spool)) }

    /// A new random secret (not saved).
    static func make() -> String { Secret.hex(Secret.randomBytes(32)) }

    /// Writes a new random secret over the old one; every cookie signed with the old one stops working.
    /// - Throws: `ServiceError.system` naming the call that failed.
    static func replace(spool: String) throws -> String {
        let secret = make()
        try PrivateFile.save(secret, at: path(spool: spool))
        return secret
    }
}
