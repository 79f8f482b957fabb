import Foundation

/// Settled notices kept for listing and sending again (schema 11: `webhook_notices.state`, `last_status`,
/// `settled_at`).
extension SQLiteJobStore {
    private static let statusColumns = noticeColumns.split(separator: ",")
        .map { "webhook_notices." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
        + ", webhook_notices.state, webhook_notices.last_status, webhook_notices.settled_at"

    static func settle(_ settled: NoticeSettlement, _ connection: SQLiteConnection) throws {
        try connection.run("""
            UPDATE webhook_notices SET state = :state, attempts = :attempts, last_status = :last_status,
            settled_at = :at WHERE id = :id
            """, [":id": .text(settled.id), ":state": .text(settled.state.rawValue), ":attempts": .int(settled.attempts),
                  ":last_status": .int(settled.lastStatus), ":at": .date(settled.at)],
            operation: "settle webhook notice")
    }

    public func notices(_ filter: NoticeFilter, limit: Int) async throws -> [NoticeStatus] {
        var conditions: [String] = []
        if filter.state != nil { conditions.append("webhook_notices.state = :state") }
        if filter.jobID != nil { conditions.append("webhook_notices.job_id = :job") }
        if filter.ownerKey != nil { conditions.append("jobs.owner_key = :owner") }
        let join = filter.ownerKey != nil ? " JOIN jobs ON jobs.id = webhook_notices.job_id" : ""
        let sql = "SELECT \(Self.statusColumns) FROM webhook_notices\(join)"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY webhook_notices.created_at, webhook_notices.id LIMIT :limit"
        return try await perform { connection in
            try connection.withStatement(sql, operation: "list webhook notices") { statement in
                if let state = filter.state { try statement.bind(state.rawValue, to: ":state") }
                if let job = filter.jobID { try statement.bind(job, to: ":job") }
                if let owner = filter.ownerKey { try statement.bind(owner, to: ":owner") }
                try statement.bind(max(0, limit), to: ":limit")
                return try statement.rows(Self.status(from:))
            }
        }
    }

    public func notice(id: String) async throws -> NoticeStatus? {
        try await perform { connection in
            try connection.withStatement("SELECT \(Self.statusColumns) FROM webhook_notices WHERE id = :id",
                                         operation: "read webhook notice") { statement in
                try statement.bind(id, to: ":id")
                return try statement.step() ? try Self.status(from: statement) : nil
            }
        }
    }

    public func retryNotice(id: String, at: Date) async throws -> WebhookNotice? {
        try await perform { connection in
            try connection.transaction("send webhook notice again") {
                try connection.run("""
                    UPDATE webhook_notices SET state = 'pending', due_at = :at, settled_at = NULL
                    WHERE id = :id AND state <> 'delivered'
                    """, [":id": .text(id), ":at": .date(at)], operation: "send webhook notice again")
                guard connection.changes > 0 else { return nil }
                return try connection.withStatement("SELECT \(Self.statusColumns) FROM webhook_notices WHERE id = :id",
                                                    operation: "read webhook notice") { statement in
                    try statement.bind(id, to: ":id")
                    return try statement.step() ? try Self.status(from: statement).notice : nil
                }
            }
        }
    }

    public func purgeSettledNotices(olderThan date: Date) async throws {
        try await perform { connection in
            try connection.run("DELETE FROM webhook_notices WHERE state <> 'pending' AND settled_at < :before",
                               [":before": .date(date)], operation: "purge settled webhook notices")
        }
    }

    private static func status(from statement: Statement) throws -> NoticeStatus {
        guard let id = statement.string(at: 0), let jobID = statement.string(at: 1), let type = statement.string(at: 2),
              let url = statement.string(at: 3), let created = statement.double(at: 5), let due = statement.double(at: 6),
              let attempts = statement.int64(at: 7), let stateText = statement.string(at: 8),
              let state = NoticeStatus.State(rawValue: stateText)
        else { throw JobStoreError.corrupt("a webhook notice row has a NULL or unreadable column") }
        let notice = WebhookNotice(id: id, jobID: jobID, type: type, url: url, body: statement.bytes(at: 4) ?? [],
                                   createdAt: StoredDate.date(seconds: created), dueAt: StoredDate.date(seconds: due),
                                   attempts: Int(attempts))
        return NoticeStatus(notice: notice, state: state, lastStatus: statement.int64(at: 9).map { Int($0) },
                            settledAt: statement.double(at: 10).map(StoredDate.date(seconds:)))
    }
}
