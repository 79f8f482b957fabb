import Foundation

extension SQLiteJobStore {
    public func saveRevokedSession(_ revocation: RevokedSession) async throws {
        try await perform { connection in
            try connection.withStatement(
                "INSERT OR REPLACE INTO revoked_sessions (nonce, expires_at) VALUES (:nonce, :expires_at)",
                operation: "save revoked session"
            ) { statement in
                try statement.bind(revocation.nonce, to: ":nonce")
                try statement.bind(StoredDate.seconds(revocation.expiresAt), to: ":expires_at")
                try statement.step()
            }
        }
    }

    public func revokedSessions(expiringAfter date: Date) async throws -> [RevokedSession] {
        try await perform { connection in
            try connection.withStatement(
                "SELECT nonce, expires_at FROM revoked_sessions WHERE expires_at > :after ORDER BY expires_at, nonce",
                operation: "read revoked sessions"
            ) { statement in
                try statement.bind(StoredDate.seconds(date), to: ":after")
                var revocations: [RevokedSession] = []
                while try statement.step() {
                    guard let nonce = statement.string("nonce"), let expiry = statement.double("expires_at") else {
                        throw JobStoreError.corrupt("a revoked session has NULL columns")
                    }
                    revocations.append(RevokedSession(nonce: nonce, expiresAt: StoredDate.date(seconds: expiry)))
                }
                return revocations
            }
        }
    }

    public func purgeRevokedSessions(expiringBy date: Date) async throws {
        try await perform { connection in
            try connection.withStatement(
                "DELETE FROM revoked_sessions WHERE expires_at <= :by",
                operation: "purge revoked sessions"
            ) { statement in
                try statement.bind(StoredDate.seconds(date), to: ":by")
                try statement.step()
            }
        }
    }
}
