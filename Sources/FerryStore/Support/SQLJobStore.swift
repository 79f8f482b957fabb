import Foundation

/// What `SQLiteJobStore` and `PostgresJobStore` do the same way, written once: their confined connection, and the
/// calls whose logic is common to both (which statements run, in which transaction) on the statements each store
/// writes in its own dialect (the static requirements, each run inside the caller's transaction).
protocol SQLJobStore: JobStore, AnyObject {
    associatedtype Connection: DatabaseConnection

    var confined: ConfinedConnection<Connection> { get }

    /// Inserts new `jobs`, numbered after every job stored before, and returns them as stored.
    /// - Throws: `JobStoreError.duplicateID` when an id is taken.
    static func insertNew(_ jobs: [JobRecord], _ connection: Connection) throws -> [JobRecord]
    /// Saves (or replaces) `record`.
    static func save(_ record: IdempotencyRecord, on connection: Connection) throws
    /// Saves (or replaces) one setting.
    static func saveSetting(name: String, value: Int64?, _ connection: Connection) throws
    static func deleteNotices(ids: [String], _ connection: Connection) throws
    static func settle(_ settled: NoticeSettlement, _ connection: Connection) throws
    static func reschedule(_ retry: WebhookNoticeRetry, _ connection: Connection) throws
}

extension SQLJobStore {
    /// Runs `body` on the store's queue with the connection and returns its result to the caller's task.
    func perform<R: Sendable>(_ body: @escaping @Sendable (Connection) throws -> R) async throws -> R {
        try await confined.perform(body)
    }

    public func close() async {
        await confined.close()
    }

    public func insert(_ jobs: [JobRecord], idempotencyRecord: IdempotencyRecord?) async throws -> [JobRecord] {
        guard !jobs.isEmpty else {
            if let idempotencyRecord { try await saveIdempotencyRecord(idempotencyRecord) }
            return []
        }
        return try await perform { connection in
            try connection.transaction("insert \(jobs.count) job(s)") {
                let stored = try Self.insertNew(jobs, connection)
                if let idempotencyRecord { try Self.save(idempotencyRecord, on: connection) }
                return stored
            }
        }
    }

    public func saveIdempotencyRecord(_ record: IdempotencyRecord) async throws {
        try await perform { connection in try Self.save(record, on: connection) }
    }

    public func saveSettings(_ settings: StoredSettings) async throws {
        let rows = settings.rows
        guard !rows.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("save settings") {
                for (name, value) in rows { try Self.saveSetting(name: name, value: value, connection) }
            }
        }
    }

    public func rescheduleNotice(id: String, dueAt: Date, attempts: Int) async throws {
        try await perform { connection in
            try Self.reschedule(WebhookNoticeRetry(id: id, dueAt: dueAt, attempts: attempts), connection)
        }
    }

    /// One transaction for a whole batch of tries: under load the sender settles many at once.
    public func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws {
        try await settle(deleting.count, rescheduling: rescheduling) { connection in
            if !deleting.isEmpty { try Self.deleteNotices(ids: deleting, connection) }
        }
    }

    public func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) async throws {
        try await settle(finishing.count, rescheduling: rescheduling) { connection in
            for settled in finishing { try Self.settle(settled, connection) }
        }
    }

    /// Runs `first` (which settles `count` notices), then reschedules `rescheduling`, in one transaction; nothing
    /// when there is no notice to settle.
    private func settle(_ count: Int, rescheduling: [WebhookNoticeRetry],
                        _ first: @escaping @Sendable (Connection) throws -> Void) async throws {
        guard count > 0 || !rescheduling.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("settle \(count + rescheduling.count) webhook notice(s)") {
                try first(connection)
                for retry in rescheduling { try Self.reschedule(retry, connection) }
            }
        }
    }
}
