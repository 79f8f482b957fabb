import Foundation

extension PostgresJobStore {
    public func update(_ job: JobRecord) async throws {
        try await perform { connection in
            let result = try connection.execute(PostgresJobRow.updateSQL, try PostgresJobRow.parameters(job.storedForm),
                                                reuse: true, operation: "update job")
            guard result.affectedRows > 0 else { throw JobStoreError.notFound(job.id) }
            try Self.notifyJobsChanged([job.id], connection)
        }
    }

    public func apply(updates: [JobRecord], deletions: [String], notices: [WebhookNotice]) async throws {
        guard !updates.isEmpty || !deletions.isEmpty || !notices.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("apply \(updates.count) update(s), \(deletions.count) deletion(s), \(notices.count) notice(s)") {
                try Self.updateRows(updates, connection)
                if !deletions.isEmpty {
                    try connection.execute("DELETE FROM jobs WHERE id = ANY($1::text[])", [.textArray(deletions)],
                                           operation: "delete jobs")
                }
                for notice in notices { try Self.insertNotice(notice, connection) }
                try Self.notifyJobsChanged(updates.map(\.id) + deletions, connection)
            }
        }
    }

    /// Replaces the stored rows of `jobs` (those still stored) in one statement.
    static func updateRows(_ jobs: [JobRecord], _ connection: PostgresConnection) throws {
        guard !jobs.isEmpty else { return }
        if jobs.count == 1 {
            try connection.execute(PostgresJobRow.updateSQL, try PostgresJobRow.parameters(jobs[0].storedForm),
                                   reuse: true, operation: "update job")
        } else {
            try connection.execute(PostgresJobRow.updateManySQL, try PostgresJobRow.updateManyParameters(jobs.map(\.storedForm)),
                                   reuse: true, operation: "update \(jobs.count) jobs")
        }
    }

    public func job(id: String) async throws -> JobRecord? {
        try await perform { connection in
            try Self.select(connection, where: "jobs.id = $1", [.text(id)], operation: "read job").first
        }
    }

    public func delete(id: String) async throws -> Bool {
        try await perform { connection in
            try connection.transaction("delete job") {
                let deleted = try connection.execute("DELETE FROM jobs WHERE id = $1", [.text(id)],
                                                     operation: "delete job").affectedRows > 0
                if deleted { try Self.notifyJobsChanged([id], connection) }
                return deleted
            }
        }
    }

    public func list(_ filter: JobFilter, after cursor: String?, limit: Int) async throws -> JobPage {
        let after = try cursor.map { try JobCursor(decoding: $0).sequence } ?? 0
        let limit = JobPage.clampedLimit(limit)
        if let states = filter.states, states.isEmpty { return JobPage(jobs: [], next: nil) }
        // One row more than asked tells whether another page follows.
        let query = PostgresJobQuery(filter, after: after, limit: limit + 1)
        return try await perform { connection in
            var jobs = try PostgresJobRow.records(from: connection.execute(query.sql, query.parameters, operation: "list jobs"))
            guard jobs.count > limit else { return JobPage(jobs: jobs, next: nil) }
            jobs.removeLast(jobs.count - limit)
            return JobPage(jobs: jobs, next: JobCursor(sequence: jobs[jobs.count - 1].sequence).encoded)
        }
    }

    public func all() async throws -> [JobRecord] {
        try await perform { connection in
            try Self.select(connection, where: nil, [], operation: "read all jobs")
        }
    }

    public func jobs(dedupeKey: String) async throws -> [JobRecord] {
        try await perform { connection in
            try Self.select(connection, where: "jobs.dedupe_key = $1", [.text(dedupeKey)], operation: "find jobs by dedupe key")
        }
    }

    public func counts() async throws -> [JobState: Int] {
        try await perform { connection in
            let result = try connection.execute("SELECT state, count(*) FROM jobs GROUP BY state", operation: "count jobs")
            var counts = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
            for row in 0..<result.rowCount {
                let text = result.string(row, 0) ?? ""
                guard let state = JobState(rawValue: text) else {
                    throw JobStoreError.corrupt("jobs table holds an unknown state \"\(text)\"")
                }
                counts[state] = Int(result.int64(row, 1) ?? 0)
            }
            return counts
        }
    }

    // MARK: Queue-side helpers (called inside `perform`)

    /// Inserts `jobs` (unowned) and tells the other nodes (at commit); inside the caller's transaction.
    static func insertNew(_ jobs: [JobRecord], _ connection: PostgresConnection) throws -> [JobRecord] {
        let stored = try insertRows(jobs, connection)
        try notifyJobsChanged(stored.map(\.id), connection)
        return stored
    }

    /// Inserts `jobs` (unowned) and returns them as stored; runs inside the caller's transaction.
    /// - Throws: `JobStoreError.duplicateID` when an id is taken.
    static func insertRows(_ jobs: [JobRecord], _ connection: PostgresConnection) throws -> [JobRecord] {
        var stored: [JobRecord] = []
        stored.reserveCapacity(jobs.count)
        for job in jobs {
            var record = job.storedForm
            let result: PostgresResult
            do {
                result = try connection.execute(PostgresJobRow.insertSQL, try PostgresJobRow.parameters(record),
                                                reuse: true, operation: "insert job")
            } catch JobStoreError.postgres(let sqlstate, _, _) where sqlstate == "23505" {
                throw JobStoreError.duplicateID(record.id)  // unique_violation: the id is taken
            }
            guard let sequence = result.int64(0, 0) else {
                throw JobStoreError.corrupt("inserting job \(record.id) returned no sequence")
            }
            record.sequence = sequence
            stored.append(record)
        }
        return stored
    }

    /// `NOTIFY ferry_jobs` with `ids` (`ClusterChannel.jobPayloads`), inside the caller's transaction: the other
    /// nodes hear of it only if it commits.
    static func notifyJobsChanged(_ ids: [String], _ connection: PostgresConnection) throws {
        try notify(jobsNotifications(ids), connection)
    }

    /// The notifications of `ferry_jobs` naming `ids`.
    static func jobsNotifications(_ ids: [String]) -> [PostgresNotification] {
        ClusterChannel.jobPayloads(ids).map { PostgresNotification(channel: ClusterChannel.jobs, payload: $0) }
    }

    /// Sends `notifications` in one statement (delivered when the caller's transaction commits).
    static func notify(_ notifications: [PostgresNotification], _ connection: PostgresConnection) throws {
        switch notifications.count {
        case 0: return
        case 1:
            try connection.execute("SELECT pg_notify($1, $2)", [.text(notifications[0].channel), .text(notifications[0].payload)],
                                   reuse: true, operation: "notify \(notifications[0].channel)")
        default:
            try connection.execute("SELECT pg_notify(n.channel, n.payload) FROM unnest($1::text[], $2::text[]) AS n (channel, payload)",
                                   [.textArray(notifications.map(\.channel)), .textArray(notifications.map(\.payload))],
                                   reuse: true, operation: "notify \(notifications.count) changes")
        }
    }

    /// Jobs matching `condition` (parameters from `$1`), in sequence order.
    private static func select(
        _ connection: PostgresConnection, where condition: String?, _ parameters: [PostgresParameter], operation: String
    ) throws -> [JobRecord] {
        var sql = "SELECT \(PostgresJobRow.selectColumns) FROM jobs"
        if let condition { sql += " WHERE \(condition)" }
        sql += " ORDER BY jobs.sequence"
        return try PostgresJobRow.records(from: connection.execute(sql, parameters, operation: operation))
    }
}
