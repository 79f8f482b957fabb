import Foundation

/// API keys in the `keys` table (schema 11), and what their transfers fetched in `key_usage` (schema 12). Every change notifies `ferry_keys` with the key's id in its transaction,
/// so the other nodes read it again (a revocation or a limit change reaches every node at once).
extension PostgresJobStore {
    private static let keyColumns = "id, name, scope, limits, digest, "
        + PostgresSQL.milliseconds("created_at") + ", " + PostgresSQL.milliseconds("last_used_at")

    public func keys() async throws -> [APIKeyRecord] {
        try await perform { connection in
            let result = try connection.execute("SELECT \(Self.keyColumns) FROM keys ORDER BY created_at, id",
                                                operation: "read keys")
            return try (0..<result.rowCount).map { try Self.key(from: result, row: $0) }
        }
    }

    public func key(id: String) async throws -> APIKeyRecord? {
        try await perform { connection in
            let result = try connection.execute("SELECT \(Self.keyColumns) FROM keys WHERE id = $1", [.text(id)],
                                                operation: "read key")
            return result.rowCount > 0 ? try Self.key(from: result, row: 0) : nil
        }
    }

    public func insertKey(_ key: APIKeyRecord) async throws {
        let key = key.storedForm
        let parameters = try Self.parameters(key)
        try await perform { connection in
            try connection.transaction("insert key") {
                do {
                    _ = try connection.execute("""
                        INSERT INTO keys (id, name, scope, limits, digest, created_at, last_used_at)
                        VALUES ($1, $2, $3, $4, $5, \(PostgresSQL.timestamp(6)), \(PostgresSQL.timestamp(7)))
                        """, parameters, operation: "insert key")
                } catch JobStoreError.postgres(let sqlstate, _, _) where sqlstate == "23505" {
                    throw JobStoreError.duplicateID(key.id)
                }
                try Self.notifyKey(key.id, connection)
            }
        }
    }

    public func updateKey(_ key: APIKeyRecord) async throws {
        let key = key.storedForm
        let parameters = try Self.parameters(key)
        try await perform { connection in
            try connection.transaction("update key") {
                let result = try connection.execute("""
                    UPDATE keys SET name = $2, scope = $3, limits = $4, digest = $5,
                    created_at = \(PostgresSQL.timestamp(6)), last_used_at = \(PostgresSQL.timestamp(7)) WHERE id = $1
                    """, parameters, operation: "update key")
                guard result.affectedRows > 0 else { throw JobStoreError.notFound(key.id) }
                try Self.notifyKey(key.id, connection)
            }
        }
    }

    public func deleteKey(id: String) async throws -> Bool {
        try await perform { connection in
            try connection.transaction("delete key") {
                let deleted = try connection.execute("DELETE FROM keys WHERE id = $1", [.text(id)],
                                                     operation: "delete key").affectedRows > 0
                if deleted { try Self.notifyKey(id, connection) }
                return deleted
            }
        }
    }

    public func addKeyUsage(_ usage: [KeyUsage], purgingBefore: Int64) async throws {
        // One row a key and bucket in the statement (ON CONFLICT may touch a row once).
        var summed: [KeyUsage: Int64] = [:]
        for item in usage { summed[KeyUsage(key: item.key, bucket: item.bucket, bytes: 0), default: 0] += item.bytes }
        let rows = summed.sorted { ($0.key.key, $0.key.bucket) < ($1.key.key, $1.key.bucket) }
        try await perform { connection in
            try connection.transaction("record key usage") {
                if !rows.isEmpty {
                    try connection.execute("""
                        INSERT INTO key_usage (key_id, bucket, bytes)
                        SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
                        ON CONFLICT (key_id, bucket) DO UPDATE SET bytes = key_usage.bytes + excluded.bytes
                        """, [.textArray(rows.map(\.key.key)), .integerArray(rows.map(\.key.bucket)),
                              .integerArray(rows.map(\.value))], reuse: true, operation: "record key usage")
                }
                try connection.execute("DELETE FROM key_usage WHERE bucket < $1", [PostgresParameter(purgingBefore)],
                                       reuse: true, operation: "purge key usage")
            }
        }
    }

    public func keyUsage(keys: [String], since: Int64) async throws -> [KeyUsage] {
        guard !keys.isEmpty else { return [] }
        return try await perform { connection in
            let result = try connection.execute("""
                SELECT key_id, bucket, bytes FROM key_usage WHERE key_id = ANY($1::text[]) AND bucket >= $2
                """, [.textArray(keys), PostgresParameter(since)], reuse: true, operation: "read key usage")
            return (0..<result.rowCount).compactMap { row in
                guard let key = result.string(row, 0), let bucket = result.int64(row, 1), let bytes = result.int64(row, 2)
                else { return nil }
                return KeyUsage(key: key, bucket: bucket, bytes: bytes)
            }
        }
    }

    public func touchKeys(_ uses: [String: Date]) async throws {
        guard !uses.isEmpty else { return }
        let sorted = uses.sorted { $0.key < $1.key }
        try await perform { connection in
            _ = try connection.execute("""
                UPDATE keys SET last_used_at = 'epoch'::timestamptz + used.at * interval '1 millisecond'
                FROM unnest($1::text[], $2::bigint[]) AS used(id, at) WHERE keys.id = used.id
                """, [.textArray(sorted.map(\.key)),
                      .text("{" + sorted.map { String(StoredDate.milliseconds($0.value)) }.joined(separator: ",") + "}")],
                operation: "record key uses")
        }
    }

    /// `NOTIFY ferry_keys` with the key's id, inside the caller's transaction (delivered on commit).
    private static func notifyKey(_ id: String, _ connection: PostgresConnection) throws {
        _ = try connection.execute("SELECT pg_notify($1, $2)", [.text(ClusterChannel.keys), .text(id)],
                                   operation: "notify \(ClusterChannel.keys)")
    }

    private static func parameters(_ key: APIKeyRecord) throws -> [PostgresParameter] {
        [.text(key.id), .text(key.name), .text(key.scope.rawValue), .text(try APIKeyRecord.encodeLimits(key.limits)),
         .text(key.digest), PostgresParameter(StoredDate.milliseconds(key.createdAt)),
         PostgresParameter(key.lastUsedAt.map(StoredDate.milliseconds))]
    }

    private static func key(from result: PostgresResult, row: Int) throws -> APIKeyRecord {
        try APIKeyRecord.decode(
            id: result.string(row, 0), name: result.string(row, 1), scope: result.string(row, 2),
            limits: result.string(row, 3), digest: result.string(row, 4),
            createdAt: result.int64(row, 5).map(StoredDate.date(milliseconds:)),
            lastUsedAt: result.int64(row, 6).map(StoredDate.date(milliseconds:)))
    }
}
