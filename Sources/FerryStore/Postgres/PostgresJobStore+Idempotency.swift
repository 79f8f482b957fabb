import Foundation

extension PostgresJobStore {
    public func idempotencyRecord(key: String) async throws -> IdempotencyRecord? {
        try await perform { connection in
            let result = try connection.execute(
                "SELECT request_hash, status, body, \(PostgresSQL.milliseconds("created_at")) FROM idempotency_records WHERE key = $1",
                [.text(key)], operation: "read idempotency record")
            guard result.rowCount > 0 else { return nil }
            guard let hash = result.string(0, 0), let status = result.int64(0, 1), let body = result.bytes(0, 2),
                  let created = result.int64(0, 3)
            else { throw JobStoreError.corrupt("idempotency record \(key) has NULL or unreadable columns") }
            return IdempotencyRecord(key: key, requestHash: hash, status: Int(status), body: body,
                                     createdAt: StoredDate.date(milliseconds: created))
        }
    }

    /// Saves (or replaces) `record`; on the store's queue, inside the caller's transaction if any.
    static func save(_ record: IdempotencyRecord, on connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO idempotency_records (key, request_hash, status, body, created_at)
            VALUES ($1, $2, $3, $4, \(PostgresSQL.timestamp(5)))
            ON CONFLICT (key) DO UPDATE SET request_hash = EXCLUDED.request_hash, status = EXCLUDED.status,
                body = EXCLUDED.body, created_at = EXCLUDED.created_at
            """, [.text(record.key), .text(record.requestHash), PostgresParameter(record.status), .bytes(record.body),
                  PostgresParameter(StoredDate.milliseconds(record.createdAt))],
            operation: "save idempotency record")
    }

    public func purgeIdempotencyRecords(olderThan date: Date) async throws {
        try await perform { connection in
            _ = try connection.execute("DELETE FROM idempotency_records WHERE created_at < \(PostgresSQL.timestamp(1))",
                                   [PostgresParameter(StoredDate.milliseconds(date))],
                                   operation: "purge idempotency records")
        }
    }
}
