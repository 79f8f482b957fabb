import FerryHTTP
import FerryStore
import Foundation
import Logging

/// Decides whether a request may reach the API (API.md, "Authentication").
///
/// - With a token: `Authorization: Bearer <token>` or the session cookie; cookie-authenticated
///   requests that change state must carry `X-Requested-With: ferry`.
/// - With a read token too (`--read-token`): the same two ways, but only for requests that read (`GET`, `HEAD`,
///   `OPTIONS`); anything else is `403 forbidden`. A session remembers which token opened it (`Sessions`).
/// - Open mode (no token, loopback host): no credentials, but the `Host` must be a loopback name
///   so DNS rebinding cannot reach the API from a browser.
/// - Always: a browser `Origin` that is not this server is refused for state changes, and bodies
///   of state-changing requests must be JSON (a cross-site HTML form cannot send that).
///
/// Immutable after start-up apart from the bound port, which its lock guards. The sessions (cookie key,
/// logged-out cookies) are `Sessions`' state, under its own lock.
final class AccessGuard: @unchecked Sendable {
    enum Credential: Equatable {
        case open
        case bearer(AccessLevel)
        case cookie(nonce: String, AccessLevel)
        /// An API key (`Authorization: Bearer fk_...`).
        case key(KeyIdentity)
        /// A session opened with an API key.
        case keyCookie(nonce: String, KeyIdentity)

        /// What the request may do.
        var access: AccessLevel {
            switch self {
            case .open: .full
            case .bearer(let access), .cookie(_, let access): access
            case .key(let key), .keyCookie(_, let key): key.access
            }
        }

        /// Whom the request speaks for.
        var principal: Principal {
            switch self {
            case .open, .bearer, .cookie: .administrator
            case .key(let key), .keyCookie(_, let key): .key(key)
            }
        }
    }

    let token: String?
    /// The token that may only read; only with `token`.
    let readToken: String?
    /// Present exactly when a token is.
    /// The page's sessions (with a token); several nodes hand them what other nodes announce.
    let sessions: Sessions?
    /// The API keys accepted besides the tokens (only with a token).
    let keys: KeyRing
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var port: Int

    init(token: String?, readToken: String? = nil, sessions: Sessions?, keys: KeyRing = KeyRing(), port: Int) {
        precondition((token == nil) == (sessions == nil), "sessions exist exactly when a token is configured")
        precondition(readToken == nil || token != nil, "a read token needs a token")
        self.token = token
        self.readToken = readToken
        self.sessions = sessions
        self.keys = keys
        self.port = port
    }

    /// The guard for `token` (and `readToken`), with its sessions (secret in `spool`, logged-out cookies in `store`)
    /// when there is one.
    /// With `shared` (several nodes), the session secret is the store's.
    static func open(token: String?, readToken: String? = nil, port: Int, spool: String, store: any JobStore,
                     shared: (any ClusterJobStore)? = nil, keys: KeyRing = KeyRing(),
                     logger: Logger) async throws -> AccessGuard {
        var sessions: Sessions?
        if let token {
            sessions = try await Sessions.open(token: token, readToken: readToken, spool: spool, store: store,
                                               shared: shared, logger: logger)
        }
        return AccessGuard(token: token, readToken: readToken, sessions: sessions, keys: keys, port: port)
    }

    var isOpen: Bool { token == nil }

    /// The port actually bound (the configured one may be 0).
    func setPort(_ port: Int) {
        lock.withLock { self.port = port }
    }

    private var currentPort: Int {
        lock.withLock { port }
    }

    /// Paths that need no credentials: health, readiness, the page and its files, logging in.
    static func isPublic(_ path: String) -> Bool {
        if path == "/healthz" || path == "/readyz" || path == "/api/v1/session" { return true }
        return !(path.hasPrefix("/api/") || path == "/api" || path == "/metrics")
    }

    /// Whether a request with this method changes state (anything but `GET`, `HEAD`, `OPTIONS`).
    static func changesState(_ request: HTTPRequest) -> Bool {
        request.method != .GET && request.method != .HEAD && request.method != .OPTIONS
    }

    /// Throws the `APIError` that refuses the request, or returns how it was authenticated (a public path: `.open`).
    func check(_ request: HTTPRequest, now: Date = Date()) throws(APIError) -> Credential {
        // aria2's RPC judges each call's secret, Origin and Host itself (`Aria2Controller`, `Aria2Authorization`):
        // its clients send the secret inside the body and often no JSON `Content-Type`.
        if request.path == Aria2Controller.path { return .open }
        let changesState = Self.changesState(request)
        if changesState { try checkOrigin(request) }
        if changesState, !request.body.isEmpty { try checkJSONBody(request) }
        if Self.isPublic(request.path) { return .open }
        return try authenticate(request, now: now)
    }

    /// How the request is authenticated, whatever its path: `.open` without a token (the `Host` then must be this
    /// machine); else its bearer token or session cookie, refusing a read-only one for a request that changes state.
    func authenticate(_ request: HTTPRequest, now: Date = Date()) throws(APIError) -> Credential {
        guard let token, let sessions else {
            try checkLoopbackHost(request)
            return .open
        }
        let changesState = Self.changesState(request)
        if let authorization = request.headers["Authorization"] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer",
               let credential = bearer(String(parts[1]).trimmingCharacters(in: .whitespaces), token: token, now: now) {
                if changesState, credential.access == .readOnly { throw Self.readOnly(request) }
                return credential
            }
            throw Self.unauthorized("the bearer token is not valid")
        }
        if let header = request.headers["Cookie"], let value = SessionCookie.value(inCookieHeader: header),
           let session = sessions.verify(value, now: now) {
            var credential = Credential.cookie(nonce: session.nonce, session.access)
            if let keyID = SessionCookie.keyID(inNonce: session.nonce) {
                // A key's session lives as long as the key: revoked, it is refused at once.
                guard let key = keys.key(id: keyID) else { throw Self.unauthorized("the session's key was revoked") }
                credential = .keyCookie(nonce: session.nonce, KeyIdentity(key))
            }
            if changesState, credential.access == .readOnly { throw Self.readOnly(request) }
            if changesState, request.headers["X-Requested-With"] != "ferry" {
                throw APIError(.forbidden, "requests that change state with a session cookie must carry 'X-Requested-With: ferry'")
            }
            return credential
        }
        throw Self.unauthorized("this request needs 'Authorization: Bearer <token>' or a session (POST /api/v1/session)")
    }

    /// What a secret presented some other way than `Authorization` may do (aria2's `"token:<secret>"` parameter, the
    /// Basic password of a `/fetch` URL's userinfo): the same decision as a bearer token's, in one place. Nil when it
    /// is neither the token, the read token nor an API key's token, or when no token is configured (open mode: see
    /// `isOpen`). Whose jobs it may see: `principal(ofSecret:)`.
    func level(ofSecret given: String) -> AccessLevel? {
        credential(ofSecret: given)?.access
    }

    /// The credential a secret presented outside `Authorization` stands for (the token, the read token or an API
    /// key, whose `principal` then scopes what the caller sees through `JobAccess`); nil as for `level(ofSecret:)`.
    func credential(ofSecret given: String, now: Date = Date()) -> Credential? {
        guard let token else { return nil }
        return bearer(given, token: token, now: now)
    }

    /// The credential of a bearer secret: the token, the read token or an API key; nil for none.
    private func bearer(_ given: String, token: String, now: Date) -> Credential? {
        if let access = level(of: given, token: token) { return .bearer(access) }
        return keys.resolve(token: given, now: now).map { .key(KeyIdentity($0)) }
    }

    /// What `given` may do: `.full` for the token, `.readOnly` for the read token, nil for neither. Both are compared
    /// in constant time, always both, so the time taken says nothing about which matched. (API keys: `bearer`.)
    private func level(of given: String, token: String) -> AccessLevel? {
        let isToken = Secret.constantTimeEqual(given, token)
        let isReadToken = readToken.map { Secret.constantTimeEqual(given, $0) } ?? false
        return isToken ? .full : isReadToken ? .readOnly : nil
    }

    // MARK: Sessions

    /// A `Set-Cookie` value for a correct token (a read-only session for the read token, a key's session for an API
    /// key's token); nil when the token is wrong or none is configured.
    func login(token given: String, now: Date = Date()) -> String? {
        guard let token, let sessions, let credential = bearer(given, token: token, now: now) else { return nil }
        if case .key(let key) = credential { return sessions.issue(now: now, keyID: key.id) }
        return sessions.issue(now: now, access: credential.access)
    }

    /// Ends the session whose cookie the request carries, if any; returns once that survives a restart.
    /// - Throws: `APIError(.unavailable)` when the logout could not be saved.
    func logout(_ request: HTTPRequest, now: Date = Date()) async throws(APIError) {
        guard let sessions, let header = request.headers["Cookie"],
              let value = SessionCookie.value(inCookieHeader: header) else { return }
        do { try await sessions.revoke(value, now: now) } catch { throw APIError(.unavailable, error.message) }
    }

    // MARK: Checks

    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, message, headers: ["WWW-Authenticate": "Bearer realm=\"ferry\""])
    }

    static func readOnly(_ request: HTTPRequest) -> APIError {
        APIError(.forbidden, "this token may only read: \(request.method.rawValue) \(request.path) is refused")
    }

    private static let loopbackNames: Set<String> = ["localhost", "127.0.0.1", "[::1]"]

    /// `Host` must be a loopback name, with our port (or none when the port is 80).
    func checkLoopbackHost(_ request: HTTPRequest) throws(APIError) {
        guard let host = request.headers["Host"]?.lowercased() else {
            if request.version == .http1_0 { return }
            throw APIError(.forbidden, "a Host header is required")
        }
        let (name, hostPort) = Self.splitHost(host)
        let port = currentPort
        let portMatches = hostPort.map { $0 == port } ?? (port == 80)
        guard Self.loopbackNames.contains(name), portMatches else {
            throw APIError(.forbidden, "Ferry is open to local callers only; Host '\(host)' is not this machine")
        }
    }

    /// A browser's `Origin` must name this server (same host and port as `Host`).
    private func checkOrigin(_ request: HTTPRequest) throws(APIError) {
        guard let origin = request.headers["Origin"]?.lowercased() else { return }
        if Self.isForeign(origin: origin, request) {
            throw APIError(.forbidden, "cross-origin requests that change state are refused (Origin '\(origin)')")
        }
    }

    /// Whether `origin` names another server than the request's `Host`.
    private static func isForeign(origin: String, _ request: HTTPRequest) -> Bool {
        let host = request.headers["Host"]?.lowercased() ?? ""
        var authority = origin
        for scheme in ["http://", "https://"] where authority.hasPrefix(scheme) { authority.removeFirst(scheme.count) }
        return authority != host
    }

    /// Whether a browser sent the request from another site's page: an `Origin` naming another server, or
    /// `Sec-Fetch-Site: cross-site` (also sent where `Origin` is not, such as an image's `GET`).
    static func isCrossSite(_ request: HTTPRequest) -> Bool {
        if request.headers["Sec-Fetch-Site"]?.lowercased() == "cross-site" { return true }
        guard let origin = request.headers["Origin"]?.lowercased() else { return false }
        return isForeign(origin: origin, request)
    }

    private func checkJSONBody(_ request: HTTPRequest) throws(APIError) {
        let type = request.headers["Content-Type"]?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased()
        guard type == "application/json" else {
            throw APIError(.unsupportedMediaType, "request bodies must be 'Content-Type: application/json'")
        }
    }

    /// ("name", port?) from a Host value such as "[::1]:8080" or "localhost".
    static func splitHost(_ host: String) -> (String, Int?) {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return (host, nil) }
            let name = String(host[...close])
            let rest = host[host.index(after: close)...]
            return (name, rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        if let colon = host.lastIndex(of: ":") {
            return (String(host[..<colon]), Int(host[host.index(after: colon)...]))
        }
        return (host, nil)
    }
}
