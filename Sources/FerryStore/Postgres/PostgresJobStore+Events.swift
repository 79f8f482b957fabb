import Foundation

/// The cluster-wide event log (`ClusterJobStore`): the `events` table, ids from the `event_id` sequence, and the
/// replay window in `event_window`.
///
/// Ids are taken under a transaction-level advisory lock (`eventLock`) held until the commit, as the last step of
/// the committing transaction: the next writer takes its ids only after this one's rows are visible, so ids become
/// visible in increasing order and a reader paging with `id > last` never skips one that commits later.
/// The cost is that commits appending events are serialized from that point to their end.
extension PostgresJobStore {
    /// Serializes the taking of event ids: "ferryev" in ASCII.
    static let eventLock: Int64 = 0x66_6572_7279_6576

    private static let eventColumns = "id, job_id, kind, data, \(PostgresSQL.milliseconds("created_at")), owner_key"

    /// Appends `events` with ids in their order, inside the caller's transaction, which must commit soon after (the
    /// lock is held until then) and notify `ferry_events` with the highest id (`eventsNotification`).
    static func appendEvents(_ events: [NewEvent], _ connection: PostgresConnection) throws -> [StoredEvent] {
        guard !events.isEmpty else { return [] }
        try connection.execute("SELECT pg_advisory_xact_lock($1)", [PostgresParameter(eventLock)], reuse: true,
                               operation: "lock the event log")
        let ids = try connection.execute("SELECT nextval('event_id') FROM generate_series(1, $1)",
                                         [PostgresParameter(events.count)], reuse: true, operation: "take event ids")
        let numbers = try (0..<ids.rowCount).map { row in
            guard let id = ids.int64(row, 0) else { throw JobStoreError.corrupt("event_id gave no number") }
            return id
        }.sorted()
        // The events' data travel as one binary `bytea` ($4), each event's its slice (1-based start, length): no
        // hex text either way (the rows come back in binary too).
        var data: [UInt8] = []
        data.reserveCapacity(events.reduce(0) { $0 + $1.data.count })
        var starts: [Int64] = [], lengths: [Int64] = []
        for event in events {
            starts.append(Int64(data.count + 1))
            lengths.append(Int64(event.data.count))
            data += event.data
        }
        let result = try connection.execute("""
            INSERT INTO events (id, job_id, kind, data, created_at, owner_key)
            SELECT id, job_id, kind, substring($4::bytea FROM e.start::integer FOR e.length::integer), clock_timestamp(),
                   nullif(owner_key, '')
            FROM unnest($1::bigint[], $2::text[], $3::text[], $5::bigint[], $6::bigint[], $7::text[])
                 AS e (id, job_id, kind, start, length, owner_key)
            RETURNING \(eventColumns)
            """, [.integerArray(numbers), .textArray(events.map(\.jobID)), .textArray(events.map(\.kind.rawValue)),
                  .bytes(data), .integerArray(starts), .integerArray(lengths),
                  .textArray(events.map { $0.ownerKey ?? "" })],
            reuse: true, binaryResults: true, operation: "append events")
        return try eventRows(result).sorted { $0.id < $1.id }
    }

    /// The notification of `ferry_events` that tells other nodes the log grew to `stored`'s highest id.
    static func eventsNotification(_ stored: [StoredEvent]) -> [PostgresNotification] {
        stored.last.map { [PostgresNotification(channel: ClusterChannel.events, payload: String($0.id))] } ?? []
    }

    public func events(after: Int64, limit: Int) async throws -> [StoredEvent] {
        let limit = min(max(limit, 1), 10_000)
        return try await perform { connection in
            try Self.eventRows(connection.execute(
                "SELECT \(Self.eventColumns) FROM events WHERE id > $1 ORDER BY id LIMIT $2",
                [PostgresParameter(after), PostgresParameter(limit)], reuse: true, binaryResults: true,
                operation: "read events"))
        }
    }

    public func eventWindow() async throws -> EventWindow {
        try await perform { connection in
            let result = try connection.execute(
                "SELECT purged_through, greatest(purged_through, (SELECT coalesce(max(id), 0) FROM events)) FROM event_window",
                operation: "read the event window")
            guard result.rowCount == 1, let purged = result.int64(0, 0), let latest = result.int64(0, 1) else {
                throw JobStoreError.corrupt("event_window does not hold one row")
            }
            return EventWindow(purgedThrough: purged, latest: latest)
        }
    }

    @discardableResult
    public func purgeEvents(keepingNewest count: Int?, createdBefore: Date?) async throws -> Int {
        var conditions: [String] = []
        var parameters: [PostgresParameter] = []
        if let count {
            parameters.append(PostgresParameter(max(0, count)))
            conditions.append("id <= coalesce((SELECT id FROM events ORDER BY id DESC OFFSET $\(parameters.count) LIMIT 1), 0)")
        }
        if let createdBefore {
            parameters.append(PostgresParameter(StoredDate.milliseconds(createdBefore)))
            conditions.append("created_at < \(PostgresSQL.timestamp(parameters.count))")
        }
        guard !conditions.isEmpty else { return 0 }
        return try await perform { [conditions, parameters] connection in
            try connection.transaction("purge events") {
                let result = try connection.execute("""
                    WITH purged AS (DELETE FROM events WHERE \(conditions.joined(separator: " OR ")) RETURNING id)
                    UPDATE event_window SET purged_through = greatest(purged_through, (SELECT coalesce(max(id), 0) FROM purged))
                    RETURNING (SELECT count(*) FROM purged)
                    """, parameters, operation: "purge events")
                return Int(result.int64(0, 0) ?? 0)
            }
        }
    }

    // MARK: Queue-side helpers

    private static func eventRows(_ result: PostgresResult) throws -> [StoredEvent] {
        try (0..<result.rowCount).map { row in
            guard let id = result.int64(row, 0), let jobID = result.string(row, 1),
                  let kind = result.string(row, 2).flatMap(StoredEventKind.init(rawValue:)),
                  let data = result.bytes(row, 3), let created = result.int64(row, 4)
            else { throw JobStoreError.corrupt("an events row has a NULL or unreadable column") }
            return StoredEvent(id: id, jobID: jobID, kind: kind, data: data, createdAt: StoredDate.date(milliseconds: created),
                               ownerKey: result.string(row, 5))
        }
    }
}
