import Foundation

/// A logged-out session cookie, remembered until the cookie would have expired anyway.
///
/// `nonce` is the cookie's random part (hex); `expiresAt` the expiry the cookie carries, kept to the millisecond
/// (`StoredDate`). Once that moment has passed the cookie is refused for its age, so the revocation can go.
public struct RevokedSession: Codable, Sendable, Equatable {
    public var nonce: String
    public var expiresAt: Date

    public init(nonce: String, expiresAt: Date) {
        self.nonce = nonce
        self.expiresAt = expiresAt
    }

    /// This revocation as a store keeps it: `expiresAt` rounded to the millisecond.
    public var storedForm: RevokedSession {
        RevokedSession(nonce: nonce, expiresAt: StoredDate.normalize(expiresAt))
    }
}
