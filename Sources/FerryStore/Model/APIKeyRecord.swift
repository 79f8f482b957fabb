import FerryCore
import Foundation

/// One API key as stored (API.md, "API keys"): who it is, what it may do, its limits, and the SHA-256 digest of its
/// token (the token itself is shown once, when the key is made, and never kept).
///
/// A plain value: whoever holds a copy owns it. Dates are kept to the millisecond (`StoredDate`), so a key read back
/// equals `storedForm` of the key written.
public struct APIKeyRecord: Sendable, Equatable {
    /// What a key may do: `read` only reads its own jobs, `write` also makes and changes them, `admin` sees every job
    /// and manages keys.
    public enum Scope: String, Sendable, CaseIterable, Codable {
        case read, write, admin
    }

    /// A key's limits; nil: none.
    public typealias Limits = KeyLimits

    public var id: String
    public var name: String
    public var scope: Scope
    public var limits: Limits
    /// SHA-256 of the token, lower-case hex.
    public var digest: String
    public var createdAt: Date
    public var lastUsedAt: Date?

    public init(id: String, name: String, scope: Scope, limits: Limits = Limits(), digest: String, createdAt: Date,
                lastUsedAt: Date? = nil) {
        self.id = id
        self.name = name
        self.scope = scope
        self.limits = limits
        self.digest = digest
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    /// This key as a store keeps it: dates rounded to the millisecond.
    public var storedForm: APIKeyRecord {
        var copy = self
        copy.createdAt = StoredDate.normalize(createdAt)
        copy.lastUsedAt = lastUsedAt.map(StoredDate.normalize)
        return copy
    }

    /// The limits as one JSON document (how both stores keep them).
    static func encodeLimits(_ limits: Limits) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do { return String(decoding: try encoder.encode(limits), as: UTF8.self) } catch {
            throw JobStoreError.corrupt("key limits cannot be encoded as JSON: \(error)")
        }
    }

    /// The stored limits of key `id`. - Throws: `JobStoreError.corrupt` for text Ferry never writes.
    static func decodeLimits(_ text: String, id: String) throws -> Limits {
        guard let limits = try? JSONDecoder().decode(Limits.self, from: Data(text.utf8)) else {
            throw JobStoreError.corrupt("key \(id): limits are not a JSON object of limits")
        }
        return limits
    }

    /// A key from its stored columns. - Throws: `JobStoreError.corrupt` for NULLs or an unknown scope.
    static func decode(id: String?, name: String?, scope: String?, limits: String?, digest: String?,
                       createdAt: Date?, lastUsedAt: Date?) throws -> APIKeyRecord {
        guard let id, let name, let scopeText = scope, let limits, let digest, let createdAt else {
            throw JobStoreError.corrupt("a key row has NULL columns")
        }
        guard let scope = Scope(rawValue: scopeText) else {
            throw JobStoreError.corrupt("key \(id): unknown scope \"\(scopeText)\"")
        }
        return APIKeyRecord(id: id, name: name, scope: scope, limits: try decodeLimits(limits, id: id), digest: digest,
                            createdAt: createdAt, lastUsedAt: lastUsedAt)
    }
}
