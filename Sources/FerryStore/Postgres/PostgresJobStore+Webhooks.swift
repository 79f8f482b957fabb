import Foundation

/// The webhook outbox in the `webhook_notices` table.
extension PostgresJobStore {
    static let noticeColumns = "id, job_id, type, url, body, \(PostgresSQL.milliseconds("created_at")), "
        + "\(PostgresSQL.milliseconds("due_at")), attempts"

    /// Inserts one notice; runs inside the caller's transaction (`apply`), on the store's queue.
    static func insertNotice(_ notice: WebhookNotice, _ connection: PostgresConnection) throws {
        try connection.execute("""
            INSERT INTO webhook_notices (id, job_id, type, url, body, created_at, due_at, attempts)
            VALUES ($1, $2, $3, $4, $5, \(PostgresSQL.timestamp(6)), \(PostgresSQL.timestamp(7)), $8)
            """, [.text(notice.id), .text(notice.jobID), .text(notice.type), .text(notice.url), .bytes(notice.body),
                  PostgresParameter(StoredDate.milliseconds(notice.createdAt)),
                  PostgresParameter(StoredDate.milliseconds(notice.dueAt)), PostgresParameter(notice.attempts)],
            operation: "insert webhook notice")
    }

    public func pendingNotices(limit: Int) async throws -> [WebhookNotice] {
        try await perform { connection in
            let result = try connection.execute(
                "SELECT \(Self.noticeColumns) FROM webhook_notices WHERE state = 'pending' ORDER BY due_at, created_at, id LIMIT $1",
                [PostgresParameter(max(0, limit))], operation: "read webhook notices")
            return try (0..<result.rowCount).map { row in
                guard let id = result.string(row, 0), let jobID = result.string(row, 1), let type = result.string(row, 2),
                      let url = result.string(row, 3), let body = result.bytes(row, 4),
                      let created = result.int64(row, 5), let due = result.int64(row, 6), let attempts = result.int64(row, 7)
                else { throw JobStoreError.corrupt("a webhook notice row has a NULL or unreadable column") }
                return WebhookNotice(id: id, jobID: jobID, type: type, url: url, body: body,
                                     createdAt: StoredDate.date(milliseconds: created),
                                     dueAt: StoredDate.date(milliseconds: due), attempts: Int(attempts))
            }
        }
    }

    /// The deletions of a batch of tries (`settleNotices(deleting:rescheduling:)`), in one statement.
    static func deleteNotices(ids: [String], _ connection: PostgresConnection) throws {
        try connection.execute("DELETE FROM webhook_notices WHERE id = ANY($1::text[])", [.textArray(ids)],
                               operation: "delete webhook notices")
    }

    static func reschedule(_ retry: WebhookNoticeRetry, _ connection: PostgresConnection) throws {
        try connection.execute(
            "UPDATE webhook_notices SET due_at = \(PostgresSQL.timestamp(2)), attempts = $3, last_status = $4 WHERE id = $1",
            [.text(retry.id), PostgresParameter(StoredDate.milliseconds(retry.dueAt)), PostgresParameter(retry.attempts),
             PostgresParameter(retry.lastStatus)],
            reuse: true, operation: "reschedule webhook notice")
    }

    @discardableResult
    public func deleteNotice(id: String) async throws -> Bool {
        try await perform { connection in
            try connection.execute("DELETE FROM webhook_notices WHERE id = $1", [.text(id)],
                                   operation: "delete webhook notice").affectedRows > 0
        }
    }
}
