import Foundation

/// Nodes, job ownership and fenced commits (`ClusterJobStore`) in the `nodes` table and the `owner`/`lease_until`
/// columns of `jobs`. Leases run on the database server's clock (`now()`), so nodes need no synchronized clocks.
///
/// Every statement that locks several job rows locks them in id order (`ORDER BY id FOR UPDATE`), so two nodes'
/// transactions wait for each other instead of deadlocking; `claim` never waits (`SKIP LOCKED`).
extension PostgresJobStore: ClusterJobStore {
    /// The states a job needs a node for; ownership of a job in any other state is released on commit.
    static let runningStates: [String] = JobState.allCases.filter(\.needsRunning).map(\.rawValue)

    /// A lease as whole milliseconds (at least 1), for `PostgresSQL.interval`.
    static func milliseconds(_ lease: Duration) -> Int64 {
        let (seconds, attoseconds) = lease.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    public func heartbeat(node: String, lease: Duration) async throws -> [ClusterNode] {
        let lease = Self.milliseconds(lease)
        return try await perform { connection in
            try connection.transaction("heartbeat of node \(node)") {
                try connection.execute("""
                    INSERT INTO nodes (id, started_at, heartbeat_at, lease_until)
                    VALUES ($1, now(), now(), now() + \(PostgresSQL.interval(2)))
                    ON CONFLICT (id) DO UPDATE SET
                        started_at = CASE WHEN nodes.lease_until < now() THEN now() ELSE nodes.started_at END,
                        heartbeat_at = now(), lease_until = excluded.lease_until
                    """, [.text(node), PostgresParameter(lease)], reuse: true, operation: "record heartbeat")
                return try Self.liveNodes(connection)
            }
        }
    }

    public func liveNodes() async throws -> [ClusterNode] {
        try await perform { try Self.liveNodes($0) }
    }

    private static func liveNodes(_ connection: PostgresConnection) throws -> [ClusterNode] {
        let result = try connection.execute("""
            SELECT id, \(PostgresSQL.milliseconds("started_at")), \(PostgresSQL.milliseconds("heartbeat_at")),
                   \(PostgresSQL.milliseconds("lease_until"))
            FROM nodes WHERE lease_until > now() ORDER BY id
            """, reuse: true, operation: "read live nodes")
        return try (0..<result.rowCount).map { row in
            guard let id = result.string(row, 0), let started = result.int64(row, 1),
                  let heartbeat = result.int64(row, 2), let until = result.int64(row, 3)
            else { throw JobStoreError.corrupt("a nodes row has a NULL column") }
            return ClusterNode(id: id, startedAt: StoredDate.date(milliseconds: started),
                               heartbeatAt: StoredDate.date(milliseconds: heartbeat),
                               leaseUntil: StoredDate.date(milliseconds: until))
        }
    }

    @discardableResult
    public func leave(node: String) async throws -> [String] {
        try await perform { connection in
            try connection.transaction("node \(node) leaves") {
                let released = try Self.releaseOwned(by: node, where: "owner = $1", [.text(node)], connection)
                try connection.execute("DELETE FROM nodes WHERE id = $1", [.text(node)], operation: "remove node")
                return released
            }
        }
    }

    public func claim(node: String, limit: Int, lease: Duration, keyCaps: [String: Int64]) async throws -> [ClaimedJob] {
        guard limit > 0 else { return [] }
        let lease = Self.milliseconds(lease)
        return try await perform { connection in
            var parameters = [PostgresParameter.text(node), PostgresParameter(limit), .textArray(Self.runningStates),
                              PostgresParameter(lease)]
            let result: PostgresResult
            if keyCaps.isEmpty {
                result = try connection.execute(Self.claimStatement(capped: false), parameters, reuse: true,
                                                operation: "claim jobs")
            } else {
                // Claims of capped keys' jobs take turns across nodes (a transaction-wide advisory lock), and the
                // claim is a statement of its own after it, so it counts what the previous claim committed.
                let keys = keyCaps.keys.sorted()
                parameters += [.textArray(keys), .integerArray(keys.map { keyCaps[$0] ?? 0 })]
                result = try connection.transaction("claim jobs of capped keys") {
                    try connection.execute("SELECT pg_advisory_xact_lock($1)", [PostgresParameter(Self.cappedClaimLock)],
                                           reuse: true, operation: "wait for other nodes' claims")
                    return try connection.execute(Self.claimStatement(capped: true), parameters, reuse: true,
                                                  operation: "claim jobs")
                }
            }
            var strings = StringInterner()
            let previousOwner = JobColumn.allCases.count
            let claimed = try (0..<result.rowCount).map { row in
                ClaimedJob(job: try PostgresJobRow.record(from: result, row: row, strings: &strings),
                           previousOwner: result.string(row, previousOwner), epoch: result.int64(row, previousOwner + 1) ?? 0,
                           objectUpload: result.string(row, previousOwner + 2), objectUploadRead: true)
            }
            // RETURNING has no order of its own.
            return claimed.sorted { ($0.job.priority, -$0.job.sequence) > ($1.job.priority, -$1.job.sequence) }
        }
    }

    /// The advisory lock claims with key caps hold for their transaction (any fixed number; Ferry takes no other).
    static let cappedClaimLock: Int64 = 0x4665_7272_7943_6C6D

    /// The claim: `$1` node, `$2` how many, `$3` running states, `$4` the lease in ms; when `capped`, `$5` the keys
    /// with a `maxActiveJobs` and `$6` their caps. A capped key's jobs are claimed only while fewer of them than its
    /// cap are owned under a running lease (by any node), the first ones in claim order; other jobs as they come.
    /// The CTE runs once; its rows stay locked by this transaction until the UPDATE has set the owner. Each row comes
    /// with the job's parts record, so a node starting it need not read that on its own.
    static func claimStatement(capped: Bool) -> String {
        let free = "state = ANY($3::text[]) AND (owner IS NULL OR lease_until <= now())"
        let caps = capped ? """
            caps AS MATERIALIZED (
                SELECT c.key, c.cap - (SELECT count(*) FROM jobs o WHERE o.owner_key = c.key AND o.owner IS NOT NULL
                    AND o.lease_until > now() AND o.state = ANY($3::text[])) AS room
                FROM unnest($5::text[], $6::bigint[]) AS c(key, cap)
            ),
            allowed AS MATERIALIZED (
                SELECT ranked.id FROM (
                    SELECT id, owner_key, row_number() OVER (PARTITION BY owner_key ORDER BY priority DESC, sequence) AS rank
                    FROM jobs WHERE owner_key = ANY($5::text[]) AND \(free)
                ) ranked JOIN caps ON caps.key = ranked.owner_key WHERE ranked.rank <= caps.room
            ),
            """ : ""
        let capCheck = capped ? " AND (owner_key IS NULL OR NOT owner_key = ANY($5::text[]) OR id IN (SELECT id FROM allowed))" : ""
        return """
            WITH \(caps) picked AS MATERIALIZED (
                SELECT id, owner AS previous_owner FROM jobs
                WHERE \(free)\(capCheck)
                ORDER BY priority DESC, sequence
                LIMIT $2
                FOR UPDATE SKIP LOCKED
            )
            UPDATE jobs SET owner = $1, lease_until = now() + \(PostgresSQL.interval(4)),
                lease_epoch = CASE WHEN jobs.lease_holder IS NOT DISTINCT FROM $1 THEN jobs.lease_epoch ELSE jobs.lease_epoch + 1 END,
                lease_holder = $1
            FROM picked WHERE jobs.id = picked.id
            RETURNING \(PostgresJobRow.selectColumns), picked.previous_owner, jobs.lease_epoch,
                (SELECT document FROM object_uploads WHERE job_id = jobs.id)
            """
    }

    public func renew(node: String, lease: Duration) async throws -> Set<String> {
        let lease = Self.milliseconds(lease)
        return try await perform { connection in
            let result = try connection.execute("""
                UPDATE jobs SET lease_until = now() + \(PostgresSQL.interval(2))
                WHERE id IN (SELECT id FROM jobs WHERE owner = $1 ORDER BY id FOR UPDATE)
                RETURNING id
                """, [.text(node), PostgresParameter(lease)], reuse: true, operation: "renew leases")
            return Set((0..<result.rowCount).compactMap { result.string($0, 0) })
        }
    }

    public func acquire(id: String, node: String, lease: Duration) async throws -> JobAcquisition {
        let lease = Self.milliseconds(lease)
        return try await perform { connection in
            try connection.transaction("acquire job \(id)") {
                let found = try connection.execute("""
                    SELECT owner, lease_until > now(), \(PostgresSQL.milliseconds("lease_until"))
                    FROM jobs WHERE id = $1 FOR UPDATE
                    """, [.text(id)], reuse: true, operation: "read the owner of a job")
                guard found.rowCount == 1 else { return .notFound }
                if let owner = found.string(0, 0), owner != node, found.string(0, 1) == "t",
                   let until = found.int64(0, 2) {
                    return .owned(by: owner, leaseUntil: StoredDate.date(milliseconds: until))
                }
                // The epoch is raised when another node than the last to take it takes it (SET reads the row as it was).
                let result = try connection.execute("""
                    UPDATE jobs SET owner = $2, lease_until = now() + \(PostgresSQL.interval(3)), lease_holder = $2,
                        lease_epoch = CASE WHEN lease_holder IS NOT DISTINCT FROM $2 THEN lease_epoch ELSE lease_epoch + 1 END
                    WHERE id = $1
                    RETURNING \(PostgresJobRow.selectColumns), lease_epoch
                    """, [.text(id), .text(node), PostgresParameter(lease)], reuse: true, operation: "acquire job")
                guard let job = try PostgresJobRow.records(from: result).first,
                      let epoch = result.int64(0, JobColumn.allCases.count) else { return .notFound }
                return .acquired(job, epoch: epoch)
            }
        }
    }

    @discardableResult
    public func release(ids: [String], node: String) async throws -> [String] {
        guard !ids.isEmpty else { return [] }
        return try await perform { connection in
            try connection.transaction("release \(ids.count) job(s)") {
                try Self.releaseOwned(by: node, where: "owner = $1 AND id = ANY($2::text[])",
                                      [.text(node), .textArray(ids)], connection)
            }
        }
    }

    public func downloadingJobs(ofKeys keys: [String]) async throws -> [String: [String: Int]] {
        guard !keys.isEmpty else { return [:] }
        return try await perform { connection in
            let result = try connection.execute("""
                SELECT owner_key, owner, count(*) FROM jobs
                WHERE owner_key = ANY($1::text[]) AND state = 'downloading' AND owner IS NOT NULL AND lease_until > now()
                GROUP BY owner_key, owner
                """, [.textArray(keys)], reuse: true, operation: "count keys' downloading jobs by node")
            var counts: [String: [String: Int]] = [:]
            for row in 0..<result.rowCount {
                guard let key = result.string(row, 0), let node = result.string(row, 1), let count = result.int64(row, 2)
                else { continue }
                counts[key, default: [:]][node] = Int(count)
            }
            return counts
        }
    }

    public func liveOwners() async throws -> [String: String] {
        try await perform { connection in
            let result = try connection.execute(
                "SELECT id, owner FROM jobs WHERE owner IS NOT NULL AND lease_until > now()",
                operation: "read job owners")
            var owners: [String: String] = [:]
            for row in 0..<result.rowCount {
                if let id = result.string(row, 0), let owner = result.string(row, 1) { owners[id] = owner }
            }
            return owners
        }
    }

    public func jobsWithLiveOwners(ids: [String]) async throws -> [(job: JobRecord, liveOwner: String?)] {
        guard !ids.isEmpty else { return [] }
        return try await perform { connection in
            let result = try connection.execute("""
                SELECT \(PostgresJobRow.selectColumns), CASE WHEN owner IS NOT NULL AND lease_until > now() THEN owner END
                FROM jobs WHERE id = ANY($1::text[])
                """, [.textArray(ids)], reuse: true, operation: "read jobs other nodes changed")
            var strings = StringInterner()
            let owner = JobColumn.allCases.count
            return try (0..<result.rowCount).map { row in
                (try PostgresJobRow.record(from: result, row: row, strings: &strings), result.string(row, owner))
            }
        }
    }

    public func commit(_ change: ClusterChange, node: String) async throws -> ClusterCommit {
        guard !change.isEmpty else { return ClusterCommit() }
        return try await perform { connection in
            try connection.transaction("commit \(change.updates.count) update(s), \(change.deletions.count) deletion(s) of node \(node)") {
                var commit = ClusterCommit()
                commit.inserted = try Self.insertRows(change.inserts, connection)
                if let record = change.idempotencyRecord { try Self.save(record, on: connection) }

                // Lock every row this commit touches, in id order, and keep those this node may change.
                let touched = Set(change.updates.map(\.id)).union(change.deletions)
                if !touched.isEmpty {
                    let owners = try connection.execute(
                        "SELECT id, owner, lease_epoch FROM jobs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
                        [.textArray(touched.sorted())], reuse: true, operation: "lock jobs to commit")
                    for row in 0..<owners.rowCount {
                        guard let id = owners.string(row, 0) else { continue }
                        let owner = owners.string(row, 1)
                        if let owner, owner != node {
                            commit.refused[id] = owner
                        } else if let held = change.heldUnder[id], owners.int64(row, 2) != held {
                            // Taken (and perhaps ended and released) by another node since: a late write.
                            commit.refused[id] = owner ?? ""
                        }
                    }
                }
                let updates = change.updates.filter { commit.refused[$0.id] == nil }
                try Self.updateRows(updates, connection)
                let deletions = change.deletions.filter { commit.refused[$0] == nil }
                if !deletions.isEmpty {
                    try connection.execute("DELETE FROM jobs WHERE id = ANY($1::text[])", [.textArray(deletions)],
                                           operation: "delete jobs")
                }
                let stopped = updates.filter { !$0.state.needsRunning }.map(\.id)
                if !stopped.isEmpty {
                    // What no longer needs running needs no owner: any node may act on it next.
                    try connection.execute("""
                        UPDATE jobs SET owner = NULL, lease_until = NULL
                        WHERE id = ANY($1::text[]) AND owner IS NOT NULL AND NOT (state = ANY($2::text[]))
                        """, [.textArray(stopped), .textArray(Self.runningStates)], reuse: true,
                        operation: "release jobs that stopped")
                }
                for notice in change.notices where commit.refused[notice.jobID] == nil {
                    try Self.insertNotice(notice, connection)
                }
                // Last: the event lock is held from here to the commit.
                commit.events = try Self.appendEvents(change.events.filter { commit.refused[$0.jobID] == nil }, connection)
                try Self.notify(Self.jobsNotifications(commit.inserted.map(\.id) + updates.map(\.id) + deletions)
                                + Self.eventsNotification(commit.events), connection)
                return commit
            }
        }
    }

    public func send(command: String, to node: String) async throws {
        let payload = ClusterChannel.commandPayload(command, to: node)
        try await perform { connection in
            _ = try connection.execute("SELECT pg_notify($1, $2)", [.text(ClusterChannel.commands), .text(payload)],
                                       operation: "send a command to node \(node)")
        }
    }

    public func notify(_ payloads: [String], on channel: String) async throws {
        guard !payloads.isEmpty else { return }
        try await perform { connection in
            _ = try connection.execute("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload",
                                       [.text(channel), .textArray(payloads)], operation: "notify \(channel)")
        }
    }

    public func firstValue(forKey key: String, proposing value: String) async throws -> String {
        try await perform { connection in
            try connection.transaction("first value of \(key)") {
                try connection.execute("INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                                       [.text(key), .text(value)], operation: "propose meta value")
                let result = try connection.execute("SELECT value FROM meta WHERE key = $1", [.text(key)],
                                                    operation: "read meta value")
                guard result.rowCount > 0, let stored = result.string(0, 0) else {
                    throw JobStoreError.corrupt("meta value \(key) vanished")
                }
                return stored
            }
        }
    }

    // MARK: Multipart uploads of unfinished jobs

    public func objectUpload(jobID: String) async throws -> String? {
        try await perform { connection in
            try connection.execute("SELECT document FROM object_uploads WHERE job_id = $1", [.text(jobID)], reuse: true,
                                   operation: "read the object upload of job \(jobID)").string(0, 0)
        }
    }

    @discardableResult
    public func saveObjectUpload(_ document: String?, jobID: String, node: String, epoch: Int64?) async throws -> Bool {
        // Another live owner, the job taken since `epoch` ($3, NULL: not compared), or (for a record) no job at all:
        // nothing is written.
        let fence = """
            NOT EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND ((owner IS NOT NULL AND owner <> $2 AND lease_until > now())
                                                          OR lease_epoch <> coalesce($3::bigint, lease_epoch)))
            """
        let epoch: PostgresParameter = epoch.map { PostgresParameter($0) } ?? .null
        return try await perform { connection in
            if let document {
                return try connection.execute("""
                    INSERT INTO object_uploads (job_id, document)
                    SELECT $1, $4 WHERE EXISTS (SELECT 1 FROM jobs WHERE id = $1) AND \(fence)
                    ON CONFLICT (job_id) DO UPDATE SET document = excluded.document, updated_at = now()
                    """, [.text(jobID), .text(node), epoch, .text(document)], reuse: true,
                    operation: "record the object upload of job \(jobID)").affectedRows > 0
            }
            return try connection.execute("DELETE FROM object_uploads WHERE job_id = $1 AND \(fence)",
                                          [.text(jobID), .text(node), epoch], reuse: true,
                                          operation: "remove the object upload of job \(jobID)").affectedRows > 0
        }
    }

    // MARK: Queue-side helpers (called inside `perform`)

    /// Releases the jobs `condition` selects (owned by `node`), in id order, notifying the other nodes; inside the
    /// caller's transaction. Returns their ids.
    private static func releaseOwned(by node: String, where condition: String, _ parameters: [PostgresParameter],
                                     _ connection: PostgresConnection) throws -> [String] {
        let result = try connection.execute("""
            UPDATE jobs SET owner = NULL, lease_until = NULL
            WHERE id IN (SELECT id FROM jobs WHERE \(condition) ORDER BY id FOR UPDATE)
            RETURNING id
            """, parameters, operation: "release jobs of node \(node)")
        let released = (0..<result.rowCount).compactMap { result.string($0, 0) }.sorted()
        try notifyJobsChanged(released, connection)
        return released
    }
}

extension JobState {
    /// `waiting`, `downloading`, `delivering`: a node has work to do for the job (claims take these).
    public var needsRunning: Bool {
        switch self {
        case .waiting, .downloading, .delivering: true
        case .paused, .finished, .failed, .cancelled: false
        }
    }
}
