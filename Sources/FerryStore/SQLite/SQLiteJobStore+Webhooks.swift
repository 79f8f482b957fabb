import Foundation

/// The webhook outbox in the `webhook_notices` table (schema 5).
extension SQLiteJobStore {
    static let noticeColumns = "id, job_id, type, url, body, created_at, due_at, attempts"

    /// Inserts one notice; runs inside the caller's transaction (`apply`), on the store's queue.
    static func insertNotice(_ notice: WebhookNotice, _ connection: SQLiteConnection) throws {
        try connection.run("""
            INSERT INTO webhook_notices (\(noticeColumns))
            VALUES (:id, :job_id, :type, :url, :body, :created_at, :due_at, :attempts)
            """, [":id": .text(notice.id), ":job_id": .text(notice.jobID), ":type": .text(notice.type),
                  ":url": .text(notice.url), ":body": .blob(notice.body), ":created_at": .date(notice.createdAt),
                  ":due_at": .date(notice.dueAt), ":attempts": .int(notice.attempts)],
            operation: "insert webhook notice")
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

    /// The deletions of a batch of tries (`settleNotices(deleting:rescheduling:)`), one statement each.
    static func deleteNotices(ids: [String], _ connection: SQLiteConnection) throws {
        for id in ids {
            try connection.run("DELETE FROM webhook_notices WHERE id = :id", [":id": .text(id)],
                               operation: "delete webhook notice")
        }
    }

    static func reschedule(_ retry: WebhookNoticeRetry, _ connection: SQLiteConnection) throws {
        try connection.run(
            "UPDATE webhook_notices SET due_at = :due_at, attempts = :attempts, last_status = :last_status WHERE id = :id",
            [":id": .text(retry.id), ":due_at": .date(retry.dueAt), ":attempts": .int(retry.attempts),
             ":last_status": .int(retry.lastStatus)],
            operation: "reschedule webhook notice")
    }

    @discardableResult
    public func deleteNotice(id: String) async throws -> Bool {
        try await perform { connection in
            try Self.deleteNotices(ids: [id], connection)
            return connection.changes > 0
        }
    }
}
