import CSQLite
import Foundation

/// API keys in the `keys` table (schema 11), and what their transfers fetched in `key_usage` (schema 12).
extension SQLiteJobStore {
    private static let keyColumns = "id, name, scope, limits, digest, created_at, last_used_at"

    public func keys() async throws -> [APIKeyRecord] {
        try await perform { connection in
            try connection.withStatement("SELECT \(Self.keyColumns) FROM keys ORDER BY created_at, id",
                                         operation: "read keys") { statement in
                try statement.rows(Self.key(from:))
            }
        }
    }

    public func key(id: String) async throws -> APIKeyRecord? {
        try await perform { connection in
            try connection.withStatement("SELECT \(Self.keyColumns) FROM keys WHERE id = :id",
                                         operation: "read key") { statement in
                try statement.bind(id, to: ":id")
                return try statement.step() ? try Self.key(from: statement) : nil
            }
        }
    }

    public func insertKey(_ key: APIKeyRecord) async throws {
        let key = key.storedForm
        try await perform { connection in
            try connection.withStatement("""
                INSERT INTO keys (\(Self.keyColumns))
                VALUES (:id, :name, :scope, :limits, :digest, :created_at, :last_used_at)
                """, operation: "insert key") { statement in
                try Self.bind(key, to: statement)
                do { try statement.step() } catch JobStoreError.sqlite(let code, _, _) where code & 0xff == SQLITE_CONSTRAINT {
                    throw JobStoreError.duplicateID(key.id)
                }
            }
        }
    }

    public func updateKey(_ key: APIKeyRecord) async throws {
        let key = key.storedForm
        try await perform { connection in
            try connection.withStatement("""
                UPDATE keys SET name = :name, scope = :scope, limits = :limits, digest = :digest,
                created_at = :created_at, last_used_at = :last_used_at WHERE id = :id
                """, operation: "update key") { statement in
                try Self.bind(key, to: statement)
                try statement.step()
            }
            guard connection.changes > 0 else { throw JobStoreError.notFound(key.id) }
        }
    }

    public func deleteKey(id: String) async throws -> Bool {
        try await perform { connection in
            try connection.run("DELETE FROM keys WHERE id = :id", [":id": .text(id)], operation: "delete key")
            return connection.changes > 0
        }
    }

    public func touchKeys(_ uses: [String: Date]) async throws {
        guard !uses.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("record key uses") {
                for (id, date) in uses.sorted(by: { $0.key < $1.key }) {
                    try connection.run("UPDATE keys SET last_used_at = :at WHERE id = :id",
                                       [":at": .date(date), ":id": .text(id)], operation: "record a key use")
                }
            }
        }
    }

    public func addKeyUsage(_ usage: [KeyUsage], purgingBefore: Int64) async throws {
        try await perform { connection in
            try connection.transaction("record key usage") {
                for item in usage {
                    try connection.run("""
                        INSERT INTO key_usage (key_id, bucket, bytes) VALUES (:key, :bucket, :bytes)
                        ON CONFLICT (key_id, bucket) DO UPDATE SET bytes = bytes + excluded.bytes
                        """, [":key": .text(item.key), ":bucket": .integer(item.bucket), ":bytes": .integer(item.bytes)],
                        operation: "record key usage")
                }
                try connection.run("DELETE FROM key_usage WHERE bucket < :before", [":before": .integer(purgingBefore)],
                                   operation: "purge key usage")
            }
        }
    }

    public func keyUsage(keys: [String], since: Int64) async throws -> [KeyUsage] {
        try await perform { connection in
            var found: [KeyUsage] = []
            for key in keys {
                try connection.withStatement("""
                    SELECT bucket, bytes FROM key_usage WHERE key_id = :key AND bucket >= :since
                    """, operation: "read key usage") { statement in
                    try statement.bind(key, to: ":key")
                    try statement.bind(since, to: ":since")
                    while try statement.step() {
                        found.append(KeyUsage(key: key, bucket: statement.int64(at: 0) ?? 0, bytes: statement.int64(at: 1) ?? 0))
                    }
                }
            }
            return found
        }
    }

    private static func bind(_ key: APIKeyRecord, to statement: Statement) throws {
        try statement.bind(key.id, to: ":id")
        try statement.bind(key.name, to: ":name")
        try statement.bind(key.scope.rawValue, to: ":scope")
        try statement.bind(try APIKeyRecord.encodeLimits(key.limits), to: ":limits")
        try statement.bind(key.digest, to: ":digest")
        try statement.bind(StoredDate.seconds(key.createdAt), to: ":created_at")
        try statement.bind(key.lastUsedAt.map(StoredDate.seconds), to: ":last_used_at")
    }

    private static func key(from statement: Statement) throws -> APIKeyRecord {
        try APIKeyRecord.decode(
            id: statement.string(at: 0), name: statement.string(at: 1), scope: statement.string(at: 2),
            limits: statement.string(at: 3), digest: statement.string(at: 4),
            createdAt: statement.double(at: 5).map(StoredDate.date(seconds:)),
            lastUsedAt: statement.double(at: 6).map(StoredDate.date(seconds:)))
    }
}
