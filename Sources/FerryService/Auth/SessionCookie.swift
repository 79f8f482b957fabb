import Foundation

/// The page's session cookie: `v1.<expiry>.<nonce>.<mac>`, signed with a key derived from the API
/// token, so sessions survive restarts and all die when the token changes. Pure apart from the clock
/// and nonce passed in.
struct SessionCookie: Sendable {
    static let name = "ferry_session"
    static let lifetime: Double = 7 * 24 * 3600

    let key: [UInt8]

    init(token: String) {
        key = Secret.hmacSHA256(key: Array("ferry-session-v1".utf8), message: Array(token.utf8))
    }

    func issue(now: Date, nonce: [UInt8] = Secret.randomBytes(16)) -> String {
        let body = "v1.\(Int64(now.timeIntervalSince1970 + Self.lifetime)).\(Secret.hex(nonce))"
        return body + "." + Secret.hex(Secret.hmacSHA256(key: key, message: Array(body.utf8)))
    }

    /// The nonce of a valid, unexpired cookie value; nil otherwise.
    func verify(_ value: String, now: Date) -> String? {
        let parts = value.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "v1", let expiry = Int64(parts[1]) else { return nil }
        let body = parts[0...2].joined(separator: ".")
        let expected = Secret.hex(Secret.hmacSHA256(key: key, message: Array(body.utf8)))
        guard Secret.constantTimeEqual(expected, String(parts[3])) else { return nil }
        guard Double(expiry) > now.timeIntervalSince1970 else { return nil }
        return String(parts[2])
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
