import Foundation

/// The page's session cookie: `v1.<expiry>.<nonce>.<mac>`, signed with a key derived from the session secret
/// (`SessionSecret`, kept in the spool) and the API token, so sessions survive restarts and all die when either
/// changes. A read-only session's cookie is signed with a key of its own (`readOnly`). Logging out one session is
/// `Sessions`' job. Pure apart from the clock and nonce passed in.
struct SessionCookie: Sendable {
    static let name = "ferry_session"
    static let lifetime: Double = 7 * 24 * 3600

    /// What a genuine cookie says: its random nonce (hex) and when it expires.
    struct Claims: Equatable, Sendable {
        var nonce: String
        var expiresAt: Date
    }

    let key: [UInt8]

    /// - Parameter readOnly: a signer for read-only sessions (logged in with `--read-token`, passed as `token`):
    ///   its key is derived apart, so a read-only cookie never verifies as a full one, even if the tokens are swapped.
    init(token: String, secret: String, readOnly: Bool = false) {
        let purpose = readOnly ? "ferry-session-v1-read-only" : "ferry-session-v1"
        key = Secret.hmacSHA256(key: Array(secret.utf8), message: Array("\(purpose)\n\(token)".utf8))
    }

    /// - Parameter keyID: for a session opened with an API key: its id leads the nonce (`<id>-<hex>`), so the guard
    ///   knows whose session it is (and refuses it once the key is revoked).
    func issue(now: Date, nonce: [UInt8] = Secret.randomBytes(16), keyID: String? = nil) -> String {
        let label = (keyID.map { $0 + "-" } ?? "") + Secret.hex(nonce)
        let body = "v1.\(Int64(now.timeIntervalSince1970 + Self.lifetime)).\(label)"
        return body + "." + Secret.hex(Secret.hmacSHA256(key: key, message: Array(body.utf8)))
    }

    /// The claims of a cookie value signed with this key and not expired at `now`; nil otherwise.
    func verify(_ value: String, now: Date) -> Claims? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let expiry = Int64(parts[1]) else { return nil }
        let body = parts[0...2].joined(separator: ".")
        let expected = Secret.hex(Secret.hmacSHA256(key: key, message: Array(body.utf8)))
        guard Secret.constantTimeEqual(expected, String(parts[3])) else { return nil }
        let expiresAt = Date(timeIntervalSince1970: Double(expiry))
        guard expiresAt > now else { return nil }
        return Claims(nonce: String(parts[2]), expiresAt: expiresAt)
    }

    /// The id of the API key whose session a nonce is (`<id>-<hex>`); nil for a token's session.
    static func keyID(inNonce nonce: String) -> String? {
        guard let dash = nonce.firstIndex(of: "-") else { return nil }
        return String(nonce[..<dash])
    }

    func setCookieHeader(_ value: String) -> String {
        "\(Self.name)=\(value); Path=/; Max-Age=\(Int(Self.lifetime)); HttpOnly; SameSite=Strict"
    }

    static var clearCookieHeader: String { "\(name)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict" }

    /// The value of our cookie in a `Cookie` header, if present.
    static func value(inCookieHeader header: String) -> String? {
        for pair in header.split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            if trimmed.hasPrefix(name + "=") { return String(trimmed.dropFirst(name.count + 1)) }
        }
        return nil
    }
}
