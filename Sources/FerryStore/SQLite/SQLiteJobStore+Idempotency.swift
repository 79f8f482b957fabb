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

    /// Saves (or replaces) `record`; on the store's queue, inside the caller's transaction if any.
    static func save(_ record: IdempotencyRecord, on connection: SQLiteConnection) throws {
        try connection.run("""
            INSERT OR REPLACE INTO idempotency_records (key, request_hash, status, body, created_at)
            VALUES (:key, :request_hash, :status, :body, :created_at)
            """, [":key": .text(record.key), ":request_hash": .text(record.requestHash), ":status": .int(record.status),
                  ":body": .blob(record.body), ":created_at": .date(record.createdAt)],
            operation: "save idempotency record")
    }

    public func purgeIdempotencyRecords(olderThan date: Date) async throws {
        try await perform { connection in
            try connection.run("DELETE FROM idempotency_records WHERE created_at < :before", [":before": .date(date)],
                               operation: "purge idempotency records")
        }
    }
}
