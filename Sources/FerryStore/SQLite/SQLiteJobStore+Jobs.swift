import CSQLite
import Foundation

/// `SQLITE_CONSTRAINT_PRIMARYKEY`, a macro Swift cannot import: `SQLITE_CONSTRAINT | (6 << 8)`.
private let primaryKeyViolation: Int32 = SQLITE_CONSTRAINT | (6 << 8)

extension SQLiteJobStore {
    /// Inserts `jobs` numbered after `job_sequence` and advances it; inside the caller's transaction.
    static func insertNew(_ jobs: [JobRecord], _ connection: SQLiteConnection) throws -> [JobRecord] {
        var sequence = try lastSequence(connection)
        var stored: [JobRecord] = []
        stored.reserveCapacity(jobs.count)
        for job in jobs {
            sequence += 1
            var record = job.storedForm
            record.sequence = sequence
            try connection.withStatement(SQLiteJobRow.insertSQL, operation: "insert job") { statement in
                try SQLiteJobRow.bind(record, to: statement, includingSequence: true)
                do {
                    try statement.step()
                } catch JobStoreError.sqlite(let code, _, _) where code == primaryKeyViolation {
                    throw JobStoreError.duplicateID(record.id)
                }
            }
            stored.append(record)
        }
        try connection.run("UPDATE counters SET value = :value WHERE name = 'job_sequence'", [":value": .integer(sequence)],
                           operation: "advance job sequence")
        return stored
    }

    public func update(_ job: JobRecord) async throws {
        try await perform { connection in
            let changed = try connection.withStatement(SQLiteJobRow.updateSQL, operation: "update job") { statement in
                try SQLiteJobRow.bind(job.storedForm, to: statement, includingSequence: false)
                try statement.step()
                return connection.changes
            }
            guard changed > 0 else { throw JobStoreError.notFound(job.id) }
        }
    }

    public func apply(updates: [JobRecord], deletions: [String], notices: [WebhookNotice]) async throws {
        guard !updates.isEmpty || !deletions.isEmpty || !notices.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("apply \(updates.count) update(s), \(deletions.count) deletion(s), \(notices.count) notice(s)") {
                for job in updates {
                    try connection.withStatement(SQLiteJobRow.updateSQL, operation: "update job") { statement in
                        try SQLiteJobRow.bind(job.storedForm, to: statement, includingSequence: false)
                        try statement.step()
                    }
                }
                for id in deletions {
                    try connection.run("DELETE FROM jobs WHERE id = :id", [":id": .text(id)], operation: "delete job")
                }
                for notice in notices { try Self.insertNotice(notice, connection) }
            }
        }
    }

    public func job(id: String) async throws -> JobRecord? {
        try await perform { connection in
            try Self.select(connection, where: "id = :id", operation: "read job") {
                try $0.bind(id, to: ":id")
            }.first
        }
    }

    public func delete(id: String) async throws -> Bool {
        try await perform { connection in
            try connection.run("DELETE FROM jobs WHERE id = :id", [":id": .text(id)], operation: "delete job")
            return connection.changes > 0
        }
    }

    public func list(_ filter: JobFilter, after cursor: String?, limit: Int) async throws -> JobPage {
        let after = try cursor.map { try JobCursor(decoding: $0).sequence } ?? 0
        let limit = JobPage.clampedLimit(limit)
        if let states = filter.states, states.isEmpty { return JobPage(jobs: [], next: nil) }
        let query = SQLiteJobQuery(filter)
        return try await perform { connection in
            // One row more than asked tells whether another page follows.
            var jobs = try connection.withStatement(query.sql, operation: "list jobs") { statement in
                try statement.bind(after, to: ":after")
                try statement.bind(limit + 1, to: ":limit")
                try query.bind(to: statement)
                var strings = StringInterner()
                return try statement.rows { try SQLiteJobRow.record(from: $0, strings: &strings) }
            }
            guard jobs.count > limit else { return JobPage(jobs: jobs, next: nil) }
            jobs.removeLast(jobs.count - limit)
            return JobPage(jobs: jobs, next: JobCursor(sequence: jobs[jobs.count - 1].sequence).encoded)
        }
    }

    public func all() async throws -> [JobRecord] {
        try await perform { connection in
            try Self.select(connection, where: nil, operation: "read all jobs") { _ in }
        }
    }

    public func jobs(dedupeKey: String) async throws -> [JobRecord] {
        try await perform { connection in
            try Self.select(connection, where: "dedupe_key = :dedupe_key", operation: "find jobs by dedupe key") {
                try $0.bind(dedupeKey, to: ":dedupe_key")
            }
        }
    }

    public func counts() async throws -> [JobState: Int] {
        try await perform { connection in
            try connection.withStatement(
                "SELECT state, COUNT(*) AS count FROM jobs GROUP BY state", operation: "count jobs"
            ) { statement in
                var counts = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
                while try statement.step() {
                    let text = statement.string("state") ?? ""
                    guard let state = JobState(rawValue: text) else {
                        throw JobStoreError.corrupt("jobs table holds an unknown state \"\(text)\"")
                    }
                    counts[state] = statement.int("count") ?? 0
                }
                return counts
            }
        }
    }

    // MARK: Queue-side helpers (called inside `perform`)

    /// Jobs matching `condition`, in sequence order (`LIMIT :limit` appended when `limit`).
    private static func select(
        _ connection: SQLiteConnection,
        where condition: String?,
        limit: Bool = false,
        operation: String,
        bind: (Statement) throws -> Void
    ) throws -> [JobRecord] {
        var sql = "SELECT \(SQLiteJobRow.selectColumns) FROM jobs"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY sequence"
        if limit { sql += " LIMIT :limit" }
        return try connection.withStatement(sql, operation: operation) { statement in
            try bind(statement)
            var strings = StringInterner()
            return try statement.rows { try SQLiteJobRow.record(from: $0, strings: &strings) }
        }
    }

    private static func lastSequence(_ connection: SQLiteConnection) throws -> Int64 {
        try connection.withStatement(
            "SELECT value FROM counters WHERE name = 'job_sequence'", operation: "read job sequence"
        ) { statement in
            guard try statement.step(), let value = statement.int64("value") else {
                throw JobStoreError.corrupt("the job sequence counter is missing")
            }
            return value
        }
    }
}
