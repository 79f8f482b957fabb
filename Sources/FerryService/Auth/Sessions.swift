import FerryStore
import Foundation
import Logging

/// The page's sessions (API.md, "Authentication"): issues session cookies, verifies them, and remembers logouts
/// across restarts.
///
/// Owns, under `lock`, the cookie signers (`SessionCookie`, keyed by the token and the spool's `SessionSecret`, and
/// with `--read-token` a second one for read-only sessions, keyed by that token; replaced when the secret is rotated)
/// and the revoked nonces (`RevokedSessions`). The store keeps the
/// revocations: they are loaded at start (expired ones purged), and `revoke` returns only once its revocation is
/// stored. A logout takes effect in memory first, so the cookie is refused at once, even when the store then fails
/// (the caller hears of that). When more unexpired logouts would have to be remembered than `RevokedSessions`
/// holds, the secret is rotated instead: every session ends, and no logout needs remembering.
final class Sessions: @unchecked Sendable {
    /// A verified session: its cookie's nonce and what it may do.
    struct Session: Equatable, Sendable {
        var nonce: String
        var access: AccessLevel
    }

    private let token: String
    private let readToken: String?
    private let spool: String
    private let store: any JobStore
    private let logger: Logger
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var cookies: SessionCookie
    /// Signs read-only sessions; present exactly when `readToken` is. Guarded by `lock`.
    private var readCookies: SessionCookie?
    /// Guarded by `lock`.
    private var revoked: RevokedSessions

    private init(token: String, readToken: String?, spool: String, store: any JobStore, logger: Logger,
                 secret: String, revoked: RevokedSessions) {
        self.token = token
        self.readToken = readToken
        self.spool = spool
        self.store = store
        self.logger = logger
        self.cookies = SessionCookie(token: token, secret: secret)
        self.readCookies = readToken.map { SessionCookie(token: $0, secret: secret, readOnly: true) }
        self.revoked = revoked
    }

    /// Reads (or makes) the session secret in `spool` and loads the revocations that have not expired.
    /// - Throws: `ServiceError` for the secret's file, `JobStoreError` when the revocations cannot be read (starting
    ///   without them would let logged-out cookies in again).
    static func open(token: String, readToken: String? = nil, spool: String, store: any JobStore, logger: Logger,
                     capacity: Int = RevokedSessions.defaultCapacity, now: Date = Date()) async throws -> Sessions {
        let secret = try SessionSecret.loadOrCreate(spool: spool, logger: logger)
        do { try await store.purgeRevokedSessions(expiringBy: now) } catch {
            logger.warning("purging expired session revocations failed", metadata: ["error": "\(error)"])
        }
        let revocations = try await store.revokedSessions(expiringAfter: now)
        return Sessions(token: token, readToken: readToken, spool: spool, store: store, logger: logger, secret: secret,
                        revoked: RevokedSessions(capacity: capacity, revocations: revocations, now: now))
    }

    /// A `Set-Cookie` value starting a new session that may do what `access` allows (`.readOnly` needs a read token).
    func issue(now: Date, access: AccessLevel = .full) -> String {
        let signer = lock.withLock { access == .full ? cookies : readCookies }
        guard let signer else { preconditionFailure("a read-only session was asked for with no read token") }
        return signer.setCookieHeader(signer.issue(now: now))
    }

    /// The session of a cookie value that is signed with a current key, unexpired and not logged out; nil otherwise.
    func verify(_ value: String, now: Date) -> Session? {
        lock.withLock {
            guard let (claims, access) = claims(of: value, now: now), !revoked.contains(claims.nonce) else { return nil }
            return Session(nonce: claims.nonce, access: access)
        }
    }

    /// What a cookie value signed by one of the current signers says, and which one signed it. Under `lock`.
    private func claims(of value: String, now: Date) -> (SessionCookie.Claims, AccessLevel)? {
        if let claims = cookies.verify(value, now: now) { return (claims, .full) }
        if let claims = readCookies?.verify(value, now: now) { return (claims, .readOnly) }
        return nil
    }

    /// Ends the session of a cookie value, for good: refused from now on and after restarts. Returns once that is
    /// durable. A value that is no valid session (forged, expired) needs nothing.
    /// - Throws: `SessionsError.notSaved` when the revocation (or the rotation of the secret) could not be saved.
    func revoke(_ value: String, now: Date) async throws(SessionsError) {
        let decision: (SessionCookie.Claims, RevokedSessions.Insertion)? = lock.withLock {
            guard let (claims, _) = claims(of: value, now: now) else { return nil }
            return (claims, revoked.insert(claims.nonce, expiresAt: claims.expiresAt, now: now))
        }
        guard let (claims, insertion) = decision else { return }
        switch insertion {
        case .expired:
            return
        case .added, .alreadyRevoked:
            // Saved again when already revoked: an earlier save of it may have failed.
            do { try await store.saveRevokedSession(RevokedSession(nonce: claims.nonce, expiresAt: claims.expiresAt)) }
            catch { throw SessionsError.notSaved("\(error)") }
            if insertion == .added(prunedExpired: true) { await purgeStore(expiringBy: now) }
        case .full:
            try await rotateSecret(now: now)
        }
    }

    /// Ends every session: a new secret in the spool first, then a new signer and no revocations.
    private func rotateSecret(now: Date) async throws(SessionsError) {
        let secret: String
        do { secret = try SessionSecret.replace(spool: spool) } catch {
            throw SessionsError.notSaved("rotating the session secret failed: \(error)")
        }
        let capacity = lock.withLock {
            cookies = SessionCookie(token: token, secret: secret)
            readCookies = readToken.map { SessionCookie(token: $0, secret: secret, readOnly: true) }
            revoked = RevokedSessions(capacity: revoked.capacity, now: now)
            return revoked.capacity
        }
        logger.warning("more than \(capacity) unexpired logouts to remember: rotated the session secret; every session has ended")
        await purgeStore(expiringBy: .distantFuture)
    }

    /// Drops stored revocations that no longer matter; a failure only leaves them for the next purge.
    private func purgeStore(expiringBy date: Date) async {
        do { try await store.purgeRevokedSessions(expiringBy: date) } catch {
            logger.warning("purging session revocations failed", metadata: ["error": "\(error)"])
        }
    }
}
