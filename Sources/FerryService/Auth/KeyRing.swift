import FerryStore
import Foundation
import Synchronization

/// The API keys the guard accepts, by token digest, readable from any thread (connection queues authenticate on it).
///
/// Owner: its `Mutex`, held only to read or replace entries. Loaded from the store at start; `KeysController` and,
/// with several nodes, `ferry_keys` notifications (`reload`) keep it in step: a revoked key is gone from here before
/// the `DELETE` answers, so its next request is `401`. Tokens are never kept: a token is hashed (SHA-256) and the
/// digest compared with the stored one in constant time (the index only narrows by a digest prefix, which an
/// attacker who does not know a token cannot aim at). Uses are noted here and written to the store in batches
/// (`takeUses`), so authenticating never waits for the store.
final class KeyRing: Sendable {
    private struct Contents {
        var byID: [String: APIKeyRecord] = [:]
        /// Key ids by the first 16 hex digits of their digest.
        var byPrefix: [Substring: [String]] = [:]
        /// Uses not yet written to the store.
        var uses: [String: Date] = [:]
    }

    private let contents = Mutex(Contents())

    init(_ keys: [APIKeyRecord] = []) {
        contents.withLock { contents in
            for key in keys { Self.insert(key, into: &contents) }
        }
    }

    /// The token's prefix (API.md: `fk_` + 32 random bytes in base64url).
    static let tokenPrefix = "fk_"

    /// A new token: `fk_` and 32 random bytes in base64url without padding.
    static func newToken() -> String {
        tokenPrefix + Base64URL.encode(Secret.randomBytes(32))
    }

    /// The digest a token is kept as: SHA-256, lower-case hex.
    static func digest(ofToken token: String) -> String {
        Secret.sha256Hex(Array(token.utf8))
    }

    /// The key whose token this is, noting its use at `now`; nil for any other text.
    func resolve(token: String, now: Date = Date()) -> APIKeyRecord? {
        guard token.hasPrefix(Self.tokenPrefix) else { return nil }
        let digest = Self.digest(ofToken: token)
        return contents.withLock { contents in
            var found: APIKeyRecord?
            for id in contents.byPrefix[digest.prefix(16)] ?? [] {
                guard let key = contents.byID[id] else { continue }
                if Secret.constantTimeEqual(key.digest, digest) { found = key }
            }
            if let found { contents.uses[found.id] = now }
            return found
        }
    }

    /// The key with this id, with its latest use.
    func key(id: String) -> APIKeyRecord? {
        contents.withLock { contents in
            guard var key = contents.byID[id] else { return nil }
            if let used = contents.uses[id] { key.lastUsedAt = used }
            return key
        }
    }

    /// The key's name, for job views (`"key"`); nil for the administrator's jobs and for revoked keys.
    func name(of id: String?) -> String? {
        guard let id else { return nil }
        return contents.withLock { $0.byID[id]?.name }
    }

    /// The ids of every key held.
    func ids() -> [String] {
        contents.withLock { Array($0.byID.keys) }
    }

    /// One limit of every key that has it, by key id (`\.maxActiveJobs`: claims hold them across nodes;
    /// `\.maxBytesPerSecond`: shared between nodes; `\.bytesPerDay`: counted in the store).
    func limits(_ limit: KeyPath<APIKeyRecord.Limits, Int64?> & Sendable) -> [String: Int64] {
        contents.withLock { contents in
            contents.byID.compactMapValues { $0.limits[keyPath: limit] }
        }
    }

    /// Adds or replaces a key (made or changed here, or read again after another node changed it).
    func put(_ key: APIKeyRecord) {
        contents.withLock { contents in
            var key = key
            // A use taken for writing may not be in the store's copy yet.
            if let known = contents.byID[key.id]?.lastUsedAt, known > key.lastUsedAt ?? .distantPast { key.lastUsedAt = known }
            Self.remove(key.id, from: &contents)
            Self.insert(key, into: &contents)
        }
    }

    /// Forgets a key: its token is refused from now on.
    func remove(_ id: String) {
        contents.withLock { Self.remove(id, from: &$0) }
    }

    /// The uses noted since the last call, for `JobStore.touchKeys`. The keys show them from now on (their
    /// `lastUsedAt`), so that a listing while the caller writes them does not fall back to the store's older value.
    func takeUses() -> [String: Date] {
        contents.withLock { contents in
            let taken = contents.uses
            contents.uses = [:]
            for (id, used) in taken { contents.byID[id]?.lastUsedAt = used }
            return taken
        }
    }

    private static func insert(_ key: APIKeyRecord, into contents: inout Contents) {
        contents.byID[key.id] = key
        contents.byPrefix[key.digest.prefix(16), default: []].append(key.id)
    }

    private static func remove(_ id: String, from contents: inout Contents) {
        guard let old = contents.byID.removeValue(forKey: id) else { return }
        let prefix = old.digest.prefix(16)
        contents.byPrefix[prefix]?.removeAll { $0 == id }
        if contents.byPrefix[prefix]?.isEmpty == true { contents.byPrefix[prefix] = nil }
    }
}

/// Base64url without padding (RFC 4648 §5), for tokens. Pure.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
