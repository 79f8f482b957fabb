import Foundation

extension SQLiteJobStore {
    public func idempotencyRecord(key: String) async throws -> IdempotencyRecord? {
        try await perform { connection in
            try connection.withStatement(
                "SELECT key, request_hash, status, body, created_at FROM idempotency_records WHERE key = :key",
                operation: "read idempotency record"
            ) { statement in
                try statement.bind(key, to: ":key")
                guard try statement.step() else { return nil }
                guard let hash = statement.string("request_hash"), let status = statement.int("status"),
                      let body = statement.bytes("body"), let created = statement.double("created_at")
                else { throw JobStoreError.corrupt("idempotency record \(key) has NULL columns") }
                return IdempotencyRecord(key: key, requestHash: hash, status: status, body: body,
                                         createdAt: StoredDate.date(seconds: created))
            }
        }
    }

    public func saveIdempotencyRecord(_ record: IdempotencyRecord) async throws {
        try await perform { connection in try Self.save(record, on: connection) }
    }

    /// Saves (or replaces) `record`; on the store's queue, inside the caller's transaction if any.
    static func save(_ record: IdempotencyRecord, on connection: SQLiteConnection) throws {
        try connection.withStatement(
            """
            INSERT OR REPLACE INTO idempotency_records (key, request_hash, status, body, created_at)
            VALUES (:key, :request_hash, :status, :body, :created_at)
            """,
            operation: "save idempotency record"
        ) { statement in
            try statement.bind(record.key, to: ":key")
            try statement.bind(record.requestHash, to: ":request_hash")
            try statement.bind(record.status, to: ":status")
            try statement.bind(record.body, to: ":body")
            try statement.bind(StoredDate.seconds(record.createdAt), to: ":created_at")
            try statement.step()
        }
    }

    public func purgeIdempotencyRecords(olderThan date: Date) async throws {
        try await perform { connection in
            try connection.withStatement(
                "DELETE FROM idempotency_records WHERE created_at < :before",
                operation: "purge idempotency records"
            ) { statement in
                try statement.bind(StoredDate.seconds(date), to: ":before")
                try statement.step()
            }
        }
    }
}
