import Foundation

/// Fetch-through's entries (schema 10, `fetch_entries`).
extension SQLiteJobStore {
    public func saveFetchEntry(_ entry: FetchEntryRecord) async throws {
        try await perform { connection in
            try connection.withStatement("""
                INSERT OR REPLACE INTO fetch_entries (job_id, cache_key, fresh_until, stale_if_error_until, lifetime, last_used)
                VALUES (:job_id, :cache_key, :fresh_until, :stale_until, :lifetime, :last_used)
                """, operation: "save fetch entry") { statement in
                try statement.bind(entry.jobID, to: ":job_id")
                try statement.bind(entry.cacheKey, to: ":cache_key")
                try statement.bind(StoredDate.seconds(entry.freshUntil), to: ":fresh_until")
                try statement.bind(StoredDate.seconds(entry.staleIfErrorUntil), to: ":stale_until")
                try statement.bind(Double(FetchEntryRecord.milliseconds(entry.lifetime)) / 1000, to: ":lifetime")
                try statement.bind(StoredDate.seconds(entry.lastUsed), to: ":last_used")
                try statement.step()
            }
        }
    }

    public func fetchEntries() async throws -> [FetchEntryRecord] {
        try await perform { connection in
            try connection.withStatement("""
                SELECT job_id, cache_key, fresh_until, stale_if_error_until, lifetime, last_used FROM fetch_entries ORDER BY job_id
                """, operation: "read fetch entries") { statement in
                var entries: [FetchEntryRecord] = []
                while try statement.step() {
                    guard let id = statement.string("job_id"), let key = statement.string("cache_key"),
                          let fresh = statement.double("fresh_until"), let stale = statement.double("stale_if_error_until"),
                          let lifetime = statement.double("lifetime"), let used = statement.double("last_used") else {
                        throw JobStoreError.corrupt("a fetch entry has NULL columns")
                    }
                    entries.append(FetchEntryRecord(
                        jobID: id, cacheKey: key, freshUntil: StoredDate.date(seconds: fresh),
                        staleIfErrorUntil: StoredDate.date(seconds: stale), lifetime: lifetime,
                        lastUsed: StoredDate.date(seconds: used)).storedForm)
                }
                return entries
            }
        }
    }

    public func deleteFetchEntry(jobID: String) async throws {
        try await perform { connection in
            try connection.withStatement("DELETE FROM fetch_entries WHERE job_id = :job_id",
                                         operation: "delete fetch entry") { statement in
                try statement.bind(jobID, to: ":job_id")
                try statement.step()
            }
        }
    }
}
