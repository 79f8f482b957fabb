import Foundation

extension SQLiteJobStore {
    public func saveRevokedSession(_ revocation: RevokedSession) async throws {
        try await perform { connection in
            try connection.run("INSERT OR REPLACE INTO revoked_sessions (nonce, expires_at) VALUES (:nonce, :expires_at)",
                               [":nonce": .text(revocation.nonce), ":expires_at": .date(revocation.expiresAt)],
                               operation: "save revoked session")
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
            try connection.run("DELETE FROM revoked_sessions WHERE expires_at <= :by", [":by": .date(date)],
                               operation: "purge revoked sessions")
        }
    }
}
