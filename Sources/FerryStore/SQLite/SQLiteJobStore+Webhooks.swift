import Foundation

/// The webhook outbox in the `webhook_notices` table (schema 5).
extension SQLiteJobStore {
    static let noticeColumns = "id, job_id, type, url, body, created_at, due_at, attempts"

    /// Inserts one notice; runs inside the caller's transaction (`apply`), on the store's queue.
    static func insertNotice(_ notice: WebhookNotice, _ connection: SQLiteConnection) throws {
        try connection.withStatement("""
            INSERT INTO webhook_notices (\(noticeColumns))
            VALUES (:id, :job_id, :type, :url, :body, :created_at, :due_at, :attempts)
            """, operation: "insert webhook notice") { statement in
            try statement.bind(notice.id, to: ":id")
            try statement.bind(notice.jobID, to: ":job_id")
            try statement.bind(notice.type, to: ":type")
            try statement.bind(notice.url, to: ":url")
            try statement.bind(notice.body, to: ":body")
            try statement.bind(StoredDate.seconds(notice.createdAt), to: ":created_at")
            try statement.bind(StoredDate.seconds(notice.dueAt), to: ":due_at")
            try statement.bind(notice.attempts, to: ":attempts")
            try statement.step()
        }
    }

    public func pendingNotices(limit: Int) async throws -> [WebhookNotice] {
        try await perform { connection in
            try connection.withStatement(
                "SELECT \(Self.noticeColumns) FROM webhook_notices WHERE state = 'pending' ORDER BY due_at, created_at, id LIMIT :limit",
                operation: "read webhook notices"
            ) { statement in
                try statement.bind(max(0, limit), to: ":limit")
                var notices: [WebhookNotice] = []
                while try statement.step() {
                    guard let id = statement.string("id"), let jobID = statement.string("job_id"),
                          let type = statement.string("type"), let url = statement.string("url"),
                          let created = statement.double("created_at"), let due = statement.double("due_at"),
                          let attempts = statement.int64("attempts")
                    else { throw JobStoreError.corrupt("a webhook notice row has a NULL column") }
                    notices.append(WebhookNotice(
                        id: id, jobID: jobID, type: type, url: url, body: statement.bytes("body") ?? [],
                        createdAt: StoredDate.date(seconds: created), dueAt: StoredDate.date(seconds: due),
                        attempts: Int(attempts)))
                }
                return notices
            }
        }
    }

    public func rescheduleNotice(id: String, dueAt: Date, attempts: Int) async throws {
        try await perform { connection in
            try Self.reschedule(WebhookNoticeRetry(id: id, dueAt: dueAt, attempts: attempts), connection)
        }
    }

    /// One transaction (one sync) for a whole batch of tries: under load the sender settles many at once.
    public func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws {
        guard !deleting.isEmpty || !rescheduling.isEmpty else { return }
        try await perform { connection in
            try connection.transaction("settle \(deleting.count + rescheduling.count) webhook notice(s)") {
                for id in deleting {
                    try connection.withStatement("DELETE FROM webhook_notices WHERE id = :id", operation: "delete webhook notice") { statement in
                        try statement.bind(id, to: ":id")
                        try statement.step()
                    }
                }
                for retry in rescheduling { try Self.reschedule(retry, connection) }
            }
        }
    }

    static func reschedule(_ retry: WebhookNoticeRetry, _ connection: SQLiteConnection) throws {
        try connection.withStatement(
            "UPDATE webhook_notices SET due_at = :due_at, attempts = :attempts, last_status = :last_status WHERE id = :id",
            operation: "reschedule webhook notice"
        ) { statement in
            try statement.bind(retry.id, to: ":id")
            try statement.bind(StoredDate.seconds(retry.dueAt), to: ":due_at")
            try statement.bind(retry.attempts, to: ":attempts")
            try statement.bind(retry.lastStatus, to: ":last_status")
            try statement.step()
        }
    }

    @discardableResult
    public func deleteNotice(id: String) async throws -> Bool {
        try await perform { connection in
            try connection.withStatement("DELETE FROM webhook_notices WHERE id = :id", operation: "delete webhook notice") { statement in
                try statement.bind(id, to: ":id")
                try statement.step()
                return connection.changes > 0
            }
        }
    }
}
