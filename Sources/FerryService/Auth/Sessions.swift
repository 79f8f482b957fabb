import FerryStore
import Foundation
import Logging

/// The page's sessions (API.md, "Authentication"): issues session cookies, verifies them, and remembers logouts
/// across restarts.
///
/// Owns, under `lock`, the cookie signer (`SessionCookie`, keyed by the token and the spool's `SessionSecret`;
/// replaced when the secret is rotated) and the revoked nonces (`RevokedSessions`). The store keeps the
/// revocations: they are loaded at start (expired ones purged), and `revoke` returns only once its revocation is
/// stored. A logout takes effect in memory first, so the cookie is refused at once, even when the store then fails
/// (the caller hears of that). When more unexpired logouts would have to be remembered than `RevokedSessions`
/// holds, the secret is rotated instead: every session ends, and no logout needs remembering.
final class Sessions: @unchecked Sendable {
    private let token: String
    private let spool: String
    private let store: any JobStore
    private let logger: Logger
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var cookies: SessionCookie
    /// Guarded by `lock`.
    private var revoked: RevokedSessions

    private init(token: String, spool: String, store: any JobStore, logger: Logger, cookies: SessionCookie,
                 revoked: RevokedSessions) {
        self.token = token
        self.spool = spool
        self.store = store
        self.logger = logger
        self.cookies = cookies
        self.revoked = revoked
    }

    /// Reads (or makes) the session secret in `spool` and loads the revocations that have not expired.
    /// - Throws: `ServiceError` for the secret's file, `JobStoreError` when the revocations cannot be read (starting
    ///   without them would let logged-out cookies in again).
    static func open(token: String, spool: String, store: any JobStore, logger: Logger,
                     capacity: Int = RevokedSessions.defaultCapacity, now: Date = Date()) async throws -> Sessions {
        let secret = try SessionSecret.loadOrCreate(spool: spool, logger: logger)
        do { try await store.purgeRevokedSessions(expiringBy: now) } catch {
            logger.warning("purging expired session revocations failed", metadata: ["error": "\(error)"])
        }
        let revocations = try await store.revokedSessions(expiringAfter: now)
        return Sessions(token: token, spool: spool, store: store, logger: logger,
                        cookies: SessionCookie(token: token, secret: secret),
                        revoked: RevokedSessions(capacity: capacity, revocations: revocations, now: now))
    }

    /// A `Set-Cookie` value starting a new session.
    func issue(now: Date) -> String {
        let cookies = lock.withLock { self.cookies }
        return cookies.setCookieHeader(cookies.issue(now: now))
    }

    /// The nonce of a cookie value that is signed with the current key, unexpired and not logged out; nil otherwise.
    func verify(_ value: String, now: Date) -> String? {
        lock.withLock {
            guard let claims = cookies.verify(value, now: now), !revoked.contains(claims.nonce) else { return nil }
            return claims.nonce
        }
    }

    /// Ends the session of a cookie value, for good: refused from now on and after restarts. Returns once that is
    /// durable. A value that is no valid session (forged, expired) needs nothing.
    /// - Throws: `APIError(.unavailable)` when the revocation (or the rotation of the secret) could not be saved.
    func revoke(_ value: String, now: Date) async throws(APIError) {
        let decision: (SessionCookie.Claims, RevokedSessions.Insertion)? = lock.withLock {
            guard let claims = cookies.verify(value, now: now) else { return nil }
            return (claims, revoked.insert(claims.nonce, expiresAt: claims.expiresAt, now: now))
        }
        guard let (claims, insertion) = decision else { return }
        switch insertion {
        case .expired:
            return
        case .added, .alreadyRevoked:
            // Saved again when already revoked: an earlier save of it may have failed.
            do { try await store.saveRevokedSession(RevokedSession(nonce: claims.nonce, expiresAt: claims.expiresAt)) }
            catch { throw APIError(.unavailable, "the logout could not be saved: \(error)") }
            if insertion == .added(prunedExpired: true) { await purgeStore(expiringBy: now) }
        case .full:
            try await rotateSecret(now: now)
        }
    }

    /// Ends every session: a new secret in the spool first, then a new signer and no revocations.
    private func rotateSecret(now: Date) async throws(APIError) {
        let secret: String
        do { secret = try SessionSecret.replace(spool: spool) } catch {
            throw APIError(.unavailable, "the logout could not be saved: rotating the session secret failed: \(error)")
        }
        let capacity = lock.withLock {
            cookies = SessionCookie(token: token, secret: secret)
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
