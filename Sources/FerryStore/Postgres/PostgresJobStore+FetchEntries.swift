import Foundation

/// Fetch-through's entries (schema 10, `fetch_entries`).
extension PostgresJobStore {
    public func saveFetchEntry(_ entry: FetchEntryRecord) async throws {
        try await perform { connection in
            _ = try connection.execute("""
                INSERT INTO fetch_entries (job_id, cache_key, fresh_until, stale_if_error_until, lifetime, last_used)
                VALUES ($1, $2, \(PostgresSQL.timestamp(3)), \(PostgresSQL.timestamp(4)), $5, \(PostgresSQL.timestamp(6)))
                ON CONFLICT (job_id) DO UPDATE SET cache_key = EXCLUDED.cache_key, fresh_until = EXCLUDED.fresh_until,
                    stale_if_error_until = EXCLUDED.stale_if_error_until, lifetime = EXCLUDED.lifetime,
                    last_used = EXCLUDED.last_used
                """, [.text(entry.jobID), .text(entry.cacheKey), PostgresParameter(StoredDate.milliseconds(entry.freshUntil)),
                      PostgresParameter(StoredDate.milliseconds(entry.staleIfErrorUntil)),
                      PostgresParameter(FetchEntryRecord.milliseconds(entry.lifetime)),
                      PostgresParameter(StoredDate.milliseconds(entry.lastUsed))],
                operation: "save fetch entry")
        }
    }

    public func fetchEntries() async throws -> [FetchEntryRecord] {
        try await perform { connection in
            let result = try connection.execute("""
                SELECT job_id, cache_key, \(PostgresSQL.milliseconds("fresh_until")),
                    \(PostgresSQL.milliseconds("stale_if_error_until")), lifetime, \(PostgresSQL.milliseconds("last_used"))
                FROM fetch_entries ORDER BY job_id
                """, operation: "read fetch entries")
            return try (0..<result.rowCount).map { row in
                guard let id = result.string(row, 0), let key = result.string(row, 1), let fresh = result.int64(row, 2),
                      let stale = result.int64(row, 3), let lifetime = result.int64(row, 4), let used = result.int64(row, 5) else {
                    throw JobStoreError.corrupt("a fetch entry has NULL columns")
                }
                return FetchEntryRecord(jobID: id, cacheKey: key, freshUntil: StoredDate.date(milliseconds: fresh),
                                        staleIfErrorUntil: StoredDate.date(milliseconds: stale),
                                        lifetime: Double(lifetime) / 1000, lastUsed: StoredDate.date(milliseconds: used))
            }
        }
    }

    public func deleteFetchEntry(jobID: String) async throws {
        try await perform { connection in
            _ = try connection.execute("DELETE FROM fetch_entries WHERE job_id = $1", [.text(jobID)],
                                       operation: "delete fetch entry")
        }
    }
}
