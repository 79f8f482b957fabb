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
///
/// With a store shared by several nodes (`shared`), the secret is the store's (`meta` key `session-secret`: the
/// first node to start proposes its spool's secret or a new one, and every node reads the one stored), so a cookie
/// made on one node works on all; each logout and each rotation is announced on `ClusterChannel.sessions`, and the
/// other nodes take it in (`heard`), or read both again after missing notifications (`reload`).
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
    /// The store several nodes share, which keeps the secret and carries logouts to the other nodes.
    private let shared: (any ClusterJobStore)?
    private let logger: Logger
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var cookies: SessionCookie
    /// Signs read-only sessions; present exactly when `readToken` is. Guarded by `lock`.
    private var readCookies: SessionCookie?
    /// Guarded by `lock`.
    private var revoked: RevokedSessions

    /// The secret the cookies are keyed by now. Guarded by `lock`.
    private var secret: String

    private init(token: String, readToken: String?, spool: String, store: any JobStore, shared: (any ClusterJobStore)?,
                 logger: Logger, secret: String, revoked: RevokedSessions) {
        self.token = token
        self.readToken = readToken
        self.spool = spool
        self.store = store
        self.shared = shared
        self.secret = secret
        self.logger = logger
        self.cookies = SessionCookie(token: token, secret: secret)
        self.readCookies = readToken.map { SessionCookie(token: $0, secret: secret, readOnly: true) }
        self.revoked = revoked
    }

    /// Reads (or makes) the session secret in `spool` (or, with `shared`, the store's) and loads the revocations
    /// that have not expired.
    /// - Throws: `ServiceError` for the secret's file, `JobStoreError` when the revocations cannot be read (starting
    ///   without them would let logged-out cookies in again) or the shared secret cannot be read.
    static func open(token: String, readToken: String? = nil, spool: String, store: any JobStore,
                     shared: (any ClusterJobStore)? = nil, logger: Logger,
                     capacity: Int = RevokedSessions.defaultCapacity, now: Date = Date()) async throws -> Sessions {
        let secret = if let shared {
            try await shared.firstValue(forKey: SessionSecret.name,
                                        proposing: SessionSecret.load(spool: spool).flatMap { $0.count >= SessionSecret.minimumLength ? $0 : nil }
                                            ?? SessionSecret.make())
        } else {
            try SessionSecret.loadOrCreate(spool: spool, logger: logger)
        }
        do { try await store.purgeRevokedSessions(expiringBy: now) } catch {
            logger.warning("purging expired session revocations failed", metadata: ["error": "\(error)"])
        }
        let revocations = try await store.revokedSessions(expiringAfter: now)
        return Sessions(token: token, readToken: readToken, spool: spool, store: store, shared: shared, logger: logger,
                        secret: secret, revoked: RevokedSessions(capacity: capacity, revocations: revocations, now: now))
    }

    /// A `Set-Cookie` value starting a new session that may do what `access` allows (`.readOnly` needs a read token).
    /// With `keyID`, a session of that API key (signed as a full one: the guard takes what it may do from the key).
    func issue(now: Date, access: AccessLevel = .full, keyID: String? = nil) -> String {
        let signer = lock.withLock { access == .full || keyID != nil ? cookies : readCookies }
        guard let signer else { preconditionFailure("a read-only session was asked for with no read token") }
        return signer.setCookieHeader(signer.issue(now: now, keyID: keyID))
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
            try await announce(ClusterChannel.sessionPayload(nonce: claims.nonce, expiresAt: claims.expiresAt))
            if insertion == .added(prunedExpired: true) { await purgeStore(expiringBy: now) }
        case .full:
            try await rotateSecret(now: now)
        }
    }

    /// Ends every session: a new secret in the spool (or the shared store) first, then a new signer and no
    /// revocations; the other nodes are told.
    private func rotateSecret(now: Date) async throws(SessionsError) {
        let secret: String
        do {
            if let shared {
                secret = SessionSecret.make()
                try await shared.setValue(secret, forKey: SessionSecret.name)
            } else {
                secret = try SessionSecret.replace(spool: spool)
            }
        } catch {
            throw SessionsError.notSaved("rotating the session secret failed: \(error)")
        }
        let capacity = lock.withLock {
            install(secret, revoked: RevokedSessions(capacity: revoked.capacity, now: now))
            return revoked.capacity
        }
        logger.warning("more than \(capacity) unexpired logouts to remember: rotated the session secret; every session has ended")
        await purgeStore(expiringBy: .distantFuture)
        try await announce(ClusterChannel.secretReplaced)
    }

    /// New signers keyed by `secret`, and `revoked`. Under `lock`.
    private func install(_ secret: String, revoked: RevokedSessions) {
        self.secret = secret
        cookies = SessionCookie(token: token, secret: secret)
        readCookies = readToken.map { SessionCookie(token: $0, secret: secret, readOnly: true) }
        self.revoked = revoked
    }

    /// Tells the other nodes (several nodes; nothing otherwise).
    private func announce(_ payload: String) async throws(SessionsError) {
        guard let shared else { return }
        do { try await shared.notify([payload], on: ClusterChannel.sessions) } catch {
            throw SessionsError.notSaved("saved, but the other nodes could not be told: \(error)")
        }
    }

    /// Takes in what another node announced (`ClusterChannel.sessions`): a logout, or a new secret.
    func heard(_ payload: String, now: Date = Date()) async {
        guard let (nonce, expiresAt) = ClusterChannel.session(inPayload: payload) else {
            await reload(now: now)
            return
        }
        lock.withLock { _ = revoked.insert(nonce, expiresAt: expiresAt, now: now) }
    }

    /// Reads the shared secret and the logouts again (after notifications may have been missed): a new secret
    /// ends every session here too.
    func reload(now: Date = Date()) async {
        guard let shared else { return }
        do {
            let stored = try await shared.value(forKey: SessionSecret.name)
            let revocations = try await shared.revokedSessions(expiringAfter: now)
            lock.withLock {
                if let stored, stored != secret {
                    install(stored, revoked: RevokedSessions(capacity: revoked.capacity, now: now))
                }
                for revocation in revocations { _ = revoked.insert(revocation.nonce, expiresAt: revocation.expiresAt, now: now) }
            }
        } catch {
            logger.warning("cannot read the page sessions' secret and logouts again", metadata: ["error": "\(error)"])
        }
    }

    /// Drops stored revocations that no longer matter; a failure only leaves them for the next purge.
    private func purgeStore(expiringBy date: Date) async {
        do { try await store.purgeRevokedSessions(expiringBy: date) } catch {
            logger.warning("purging session revocations failed", metadata: ["error": "\(error)"])
        }
    }
}
