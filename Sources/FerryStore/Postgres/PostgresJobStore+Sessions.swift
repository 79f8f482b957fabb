import Foundation

extension PostgresJobStore {
    public func saveRevokedSession(_ revocation: RevokedSession) async throws {
        try await perform { connection in
            _ = try connection.execute("""
                INSERT INTO revoked_sessions (nonce, expires_at) VALUES ($1, \(PostgresSQL.timestamp(2)))
                ON CONFLICT (nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
                """, [.text(revocation.nonce), PostgresParameter(StoredDate.milliseconds(revocation.expiresAt))],
                operation: "save revoked session")
        }
    }

    public func revokedSessions(expiringAfter date: Date) async throws -> [RevokedSession] {
        try await perform { connection in
            let result = try connection.execute("""
                SELECT nonce, \(PostgresSQL.milliseconds("expires_at")) FROM revoked_sessions
                WHERE expires_at > \(PostgresSQL.timestamp(1)) ORDER BY expires_at, nonce
                """, [PostgresParameter(StoredDate.milliseconds(date))], operation: "read revoked sessions")
            return try (0..<result.rowCount).map { row in
                guard let nonce = result.string(row, 0), let expiry = result.int64(row, 1) else {
                    throw JobStoreError.corrupt("a revoked session has NULL columns")
                }
                return RevokedSession(nonce: nonce, expiresAt: StoredDate.date(milliseconds: expiry))
            }
        }
    }

    public func purgeRevokedSessions(expiringBy date: Date) async throws {
        try await perform { connection in
            _ = try connection.execute("DELETE FROM revoked_sessions WHERE expires_at <= \(PostgresSQL.timestamp(1))",
                                   [PostgresParameter(StoredDate.milliseconds(date))], operation: "purge revoked sessions")
        }
    }
}
