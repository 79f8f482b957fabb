import Foundation

/// Settled notices kept for listing and sending again (schema 11, as SQLite's).
extension PostgresJobStore {
    private static let statusColumns = "webhook_notices.id, webhook_notices.job_id, webhook_notices.type, "
        + "webhook_notices.url, webhook_notices.body, \(PostgresSQL.milliseconds("webhook_notices.created_at")), "
        + "\(PostgresSQL.milliseconds("webhook_notices.due_at")), webhook_notices.attempts, webhook_notices.state, "
        + "webhook_notices.last_status, \(PostgresSQL.milliseconds("webhook_notices.settled_at"))"

    static func settle(_ settled: NoticeSettlement, _ connection: PostgresConnection) throws {
        try connection.execute("""
            UPDATE webhook_notices SET state = $2, attempts = $3, last_status = $4,
            settled_at = \(PostgresSQL.timestamp(5)) WHERE id = $1
            """, [.text(settled.id), .text(settled.state.rawValue), PostgresParameter(settled.attempts),
                  PostgresParameter(settled.lastStatus), PostgresParameter(StoredDate.milliseconds(settled.at))],
            reuse: true, operation: "settle webhook notice")
    }

    public func notices(_ filter: NoticeFilter, limit: Int) async throws -> [NoticeStatus] {
        var parameters: [PostgresParameter] = [PostgresParameter(max(0, limit))]
        var conditions: [String] = []
        if let state = filter.state {
            parameters.append(.text(state.rawValue))
            conditions.append("webhook_notices.state = $\(parameters.count)")
        }
        if let job = filter.jobID {
            parameters.append(.text(job))
            conditions.append("webhook_notices.job_id = $\(parameters.count)")
        }
        var join = ""
        if let owner = filter.ownerKey {
            parameters.append(.text(owner))
            conditions.append("jobs.owner_key = $\(parameters.count)")
            join = " JOIN jobs ON jobs.id = webhook_notices.job_id"
        }
        let sql = "SELECT \(Self.statusColumns) FROM webhook_notices\(join)"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY webhook_notices.created_at, webhook_notices.id LIMIT $1"
        let bound = parameters
        return try await perform { connection in
            let result = try connection.execute(sql, bound, operation: "list webhook notices")
            return try (0..<result.rowCount).map { try Self.status(from: result, row: $0) }
        }
    }

    public func notice(id: String) async throws -> NoticeStatus? {
        try await perform { connection in
            let result = try connection.execute("SELECT \(Self.statusColumns) FROM webhook_notices WHERE id = $1",
                                                [.text(id)], operation: "read webhook notice")
            return result.rowCount > 0 ? try Self.status(from: result, row: 0) : nil
        }
    }

    public func retryNotice(id: String, at: Date) async throws -> WebhookNotice? {
        try await perform { connection in
            let result = try connection.execute("""
                UPDATE webhook_notices SET state = 'pending', due_at = \(PostgresSQL.timestamp(2)), settled_at = NULL
                WHERE id = $1 AND state <> 'delivered' RETURNING \(Self.statusColumns)
                """, [.text(id), PostgresParameter(StoredDate.milliseconds(at))], operation: "send webhook notice again")
            return result.rowCount > 0 ? try Self.status(from: result, row: 0).notice : nil
        }
    }

    public func purgeSettledNotices(olderThan date: Date) async throws {
        try await perform { connection in
            _ = try connection.execute(
                "DELETE FROM webhook_notices WHERE state <> 'pending' AND settled_at < \(PostgresSQL.timestamp(1))",
                [PostgresParameter(StoredDate.milliseconds(date))], operation: "purge settled webhook notices")
        }
    }

    private static func status(from result: PostgresResult, row: Int) throws -> NoticeStatus {
        guard let id = result.string(row, 0), let jobID = result.string(row, 1), let type = result.string(row, 2),
              let url = result.string(row, 3), let body = result.bytes(row, 4),
              let created = result.int64(row, 5), let due = result.int64(row, 6), let attempts = result.int64(row, 7),
              let stateText = result.string(row, 8), let state = NoticeStatus.State(rawValue: stateText)
        else { throw JobStoreError.corrupt("a webhook notice row has a NULL or unreadable column") }
        let notice = WebhookNotice(id: id, jobID: jobID, type: type, url: url, body: body,
                                   createdAt: StoredDate.date(milliseconds: created),
                                   dueAt: StoredDate.date(milliseconds: due), attempts: Int(attempts))
        return NoticeStatus(notice: notice, state: state, lastStatus: result.int64(row, 9).map { Int($0) },
                            settledAt: result.int64(row, 10).map(StoredDate.date(milliseconds:)))
    }
}
