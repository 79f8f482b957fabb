import FerryStore
import Foundation

/// The nonces of logged-out session cookies that have not expired yet, at most `capacity` of them.
///
/// A pure value (the clock is passed in); `Sessions` keeps it under its lock and mirrors it in the store. An entry
/// is needed only until its cookie expires (then the cookie is refused for its age), so expired entries are
/// dropped whenever the set reaches its capacity. If it is still full, `insert` remembers nothing and answers
/// `.full`: the caller then ends every session at once (rotating the secret) rather than forget a logout. A set
/// loaded with more than `capacity` entries keeps them all, for the same reason.
struct RevokedSessions: Sendable {
    /// Logouts within one cookie lifetime (7 days) before every session is ended instead: far more than
    /// people logging out of the page, few enough to hold in memory (about a megabyte).
    static let defaultCapacity = 10_000

    enum Insertion: Equatable {
        /// Remembered; `prunedExpired` when expired entries were dropped to make room.
        case added(prunedExpired: Bool)
        case alreadyRevoked
        /// The cookie has expired: nothing to remember.
        case expired
        /// `capacity` unexpired logouts are remembered already; nothing was added.
        case full
    }

    let capacity: Int
    private var expiries: [String: Date] = [:]

    /// The revocations given that have not expired at `now`.
    init(capacity: Int = defaultCapacity, revocations: [RevokedSession] = [], now: Date) {
        self.capacity = capacity
        for revocation in revocations where revocation.expiresAt > now {
            expiries[revocation.nonce] = revocation.expiresAt
        }
    }

    var count: Int { expiries.count }

    func contains(_ nonce: String) -> Bool { expiries[nonce] != nil }

    mutating func insert(_ nonce: String, expiresAt: Date, now: Date) -> Insertion {
        guard expiresAt > now else { return .expired }
        guard expiries[nonce] == nil else { return .alreadyRevoked }
        var pruned = false
        if expiries.count >= capacity {
            let before = expiries.count
            expiries = expiries.filter { $0.value > now }
            pruned = expiries.count < before
        }
        guard expiries.count < capacity else { return .full }
        expiries[nonce] = expiresAt
        return .added(prunedExpired: pruned)
    }
}
