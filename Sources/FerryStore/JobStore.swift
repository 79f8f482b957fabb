import Foundation

/// Durable storage of jobs, idempotency records, revoked session cookies, the service's runtime settings, the
/// webhook outbox (`WebhookNotice`) and a little metadata.
///
/// Every mutating call is durable (synced) when it returns. Safe to call from any task; implementations own their
/// state (`SQLiteJobStore`: a private serial queue; `MemoryJobStore`: an actor). The same contract tests
/// (`JobStoreContractTests`) run against every implementation.
///
/// Behaviour every implementation shares:
/// - `insert` assigns `sequence` (strictly increasing, never reused, even after deletes) and stores the whole
///   batch or nothing; an id already stored, or repeated in the batch, throws `JobStoreError.duplicateID`.
/// - Dates are kept to the millisecond (`StoredDate`): what is read back equals `storedForm` of what was written.
/// - `list` returns jobs oldest first (sequence ascending); `limit` is clamped to 1...1000; `next` is an opaque
///   `JobCursor`, `nil` on the last page; a cursor no store made throws `JobStoreError.invalidCursor`. A set of
///   states filters (an empty set matches nothing); `nil` lists every state. `JobFilter.tag` and `.text` filter
///   too, with the same meaning everywhere (`JobFilter.matches` defines it).
/// - `counts` has an entry for every `JobState`, zero included.
///
/// Implementations: `SQLiteJobStore` (default, WAL, in the spool), `PostgresJobStore` (`--store postgres://...`, one
/// node or several: it is also a `ClusterJobStore`), `MemoryJobStore` (tests, ephemeral mode).
///
/// ## A PostgreSQL store shared by several Ferry nodes
/// Nothing here is SQLite-specific: the calls are async, ids are strings, cursors are opaque, dates have a fixed
/// precision, and there is no transaction handle in the protocol. What only several nodes need is a protocol of its
/// own, `ClusterJobStore` (a single node never needs it: the engine's scheduler owns its queue), so this one stays
/// as it is. `PostgresJobStore` does all of it:
/// - take `sequence` from a database `SEQUENCE` (`bigint DEFAULT nextval('job_sequence')`, read back with
///   `INSERT ... RETURNING sequence`); sequences from concurrent transactions may commit out of order, so lists are
///   not the way to replay events: the event log below is;
/// - ownership: `jobs.owner` (a node id) and `jobs.lease_until`, on the database's clock. The rule: a node changes
///   a job only while it owns it (or nobody does). `claim` takes jobs that need running (`waiting`, and
///   `downloading`/`delivering` whose owner's lease expired: a handover) with `... ORDER BY priority DESC, sequence
///   LIMIT $n FOR UPDATE SKIP LOCKED`, leaving the state to the caller; `renew` extends the leases and answers
///   which jobs the node still owns (fencing: one taken over must be stopped); `acquire` takes one job for an
///   action or names its live owner, to whom the command is forwarded (`send(command:to:)`); `commit` (the group
///   commit of a node) refuses updates and deletions of jobs another node owns, with their events and notices,
///   and releases jobs it leaves paused, failed, finished or cancelled; `release`/`leave` give jobs back. Rows are
///   locked in id order everywhere so nodes wait for each other rather than deadlock; `nodes` holds heartbeats;
/// - events: an `events` table whose ids come from the `event_id` SEQUENCE, taken under a transaction-level
///   advisory lock held to the commit, as the commit's last step, so ids become visible in increasing order and a
///   reader paging `id > last` misses none (gapless replay on any node); `event_window` says from where replay is
///   still possible once old events are purged; the sequence starts above a single node's stored high-water mark;
/// - publish changes with `NOTIFY` in the same transaction (delivered only on commit, `ClusterChannel`):
///   `ferry_jobs` (changed ids), `ferry_events` (highest id), `ferry_commands` (a command for one node); each node
///   listens on a connection of its own (`PostgresListener`) and, when it says it reconnected, catches up from the
///   store. The plain `JobStore` writes notify `ferry_jobs` too, so a job submitted anywhere is claimed soon;
/// - keep tags in a `job_tags (tag, sequence)` table too (or a `text[]` column with a GIN index) and `search_text`
///   under a `pg_trgm` GIN index, so `tag` and `q` stay indexed;
/// - keep idempotency records in a table keyed by `key` with `INSERT ... ON CONFLICT DO NOTHING`, so two nodes
///   racing on one key agree on the first answer; purge with `DELETE ... WHERE created_at < $1`;
/// - keep revoked sessions in a table too; each node loads them at start, so a logout made on another node would
///   also need a `NOTIFY` for nodes already running;
/// - map SQLSTATE errors into `JobStoreError` (a `.postgres(sqlstate:message:operation:)` case), as SQLite codes are:
///   `isUnavailable` (class `08`, a server shutting down), `isConflict` (`40001`, `40P01`: try again).
public protocol JobStore: Sendable {
    /// Stores new jobs in one transaction and returns them as stored: `sequence` assigned, dates normalized.
    /// With `idempotencyRecord`, the answer to the request that created them is saved (or replaced) in the
    /// same transaction: after a crash either both are there or neither, so a retried request never
    /// creates the jobs twice.
    func insert(_ jobs: [JobRecord], idempotencyRecord: IdempotencyRecord?) async throws -> [JobRecord]
    /// Replaces the job with the same id (its `sequence` is kept as stored). Throws `JobStoreError.notFound`.
    func update(_ job: JobRecord) async throws
    /// Replaces and deletes jobs and adds webhook notices in one transaction (a group commit): all or nothing,
    /// durable when it returns. Updates of ids not stored (deleted meanwhile) are skipped, not errors; notices are
    /// kept whatever happens to their job. A notice id already stored fails the whole transaction.
    func apply(updates: [JobRecord], deletions: [String], notices: [WebhookNotice]) async throws
    func job(id: String) async throws -> JobRecord?
    /// Whether a job was deleted.
    func delete(id: String) async throws -> Bool
    /// Jobs that pass `filter`, oldest first (sequence ascending). The filter is applied by the store itself
    /// (SQLite: the `job_tags` index and the `search_text` column), so a page holds `limit` matches whenever that
    /// many follow the cursor, and a cursor from a filtered page continues the same filtered walk.
    func list(_ filter: JobFilter, after cursor: String?, limit: Int) async throws -> JobPage
    /// Every job, oldest first (start-up recovery).
    func all() async throws -> [JobRecord]
    /// Jobs with this dedupe key, oldest first, whatever their state.
    func jobs(dedupeKey: String) async throws -> [JobRecord]
    /// How many jobs are in each state; every state present.
    func counts() async throws -> [JobState: Int]
    func idempotencyRecord(key: String) async throws -> IdempotencyRecord?
    /// Saves (or replaces) the record for its key.
    func saveIdempotencyRecord(_ record: IdempotencyRecord) async throws
    /// Deletes records created strictly before `olderThan`.
    func purgeIdempotencyRecords(olderThan: Date) async throws
    /// Small metadata (e.g. the last event id).
    func value(forKey key: String) async throws -> String?
    func setValue(_ value: String, forKey key: String) async throws
    /// Saves (or replaces) the revocation of a logged-out session cookie, keyed by its nonce.
    func saveRevokedSession(_ revocation: RevokedSession) async throws
    /// Revocations whose cookie expires strictly after `date`, soonest expiry first (then by nonce).
    func revokedSessions(expiringAfter date: Date) async throws -> [RevokedSession]
    /// Deletes revocations whose cookie expires at or before `date` (`.distantFuture` deletes them all).
    func purgeRevokedSessions(expiringBy date: Date) async throws
    /// The service settings saved by `saveSettings`, each field nil when never saved (a fresh store: all nil).
    func settings() async throws -> StoredSettings
    /// Saves the fields of `settings` that are set, in one transaction, leaving the others as stored
    /// (`maxBytesPerSecond` `.some(nil)` saves "no limit").
    func saveSettings(_ settings: StoredSettings) async throws
    /// Saves (or replaces) fetch-through's entry of a job (`FetchEntryRecord`, keyed by its job id).
    func saveFetchEntry(_ entry: FetchEntryRecord) async throws
    /// Every fetch-through entry, by job id.
    func fetchEntries() async throws -> [FetchEntryRecord]
    /// Removes a job's fetch-through entry, if it has one.
    func deleteFetchEntry(jobID: String) async throws
    /// The webhook outbox: up to `limit` notices, soonest due first (then oldest, then by id).
    func pendingNotices(limit: Int) async throws -> [WebhookNotice]
    /// Sets a notice's next due time and tries made; a notice no longer stored is skipped.
    func rescheduleNotice(id: String, dueAt: Date, attempts: Int) async throws
    /// Removes a notice (delivered or given up); whether it was there.
    @discardableResult
    func deleteNotice(id: String) async throws -> Bool
    /// Settles many tries at once, in one transaction where the store has them: deletes the notices `deleting`
    /// names and reschedules those of `rescheduling` (notices no longer stored are skipped).
    func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws
    /// Settles tries: `finishing` notices stay in the table as `delivered` or `failed` (listed by `notices`, sent
    /// again by `retryNotice`), `rescheduling` ones get their next due time. One transaction where the store has them.
    func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) async throws
    /// Notices that pass `filter`, oldest first (then by id), at most `limit`.
    func notices(_ filter: NoticeFilter, limit: Int) async throws -> [NoticeStatus]
    func notice(id: String) async throws -> NoticeStatus?
    /// Makes a pending or failed notice due at `at` (a failed one pending again, its tries kept) and returns it; nil
    /// when no such notice is pending or failed (absent, or delivered).
    func retryNotice(id: String, at: Date) async throws -> WebhookNotice?
    /// Deletes delivered and failed notices settled strictly before `olderThan`.
    func purgeSettledNotices(olderThan: Date) async throws
    /// API keys (API.md, "API keys"), oldest first (then by id). Stored in the `keys` table (schema 11); a job's key
    /// is `JobRecord.ownerKey`, and `JobFilter.ownerKey` lists one key's jobs from an index.
    func keys() async throws -> [APIKeyRecord]
    func key(id: String) async throws -> APIKeyRecord?
    /// Stores a new key. - Throws: `JobStoreError.duplicateID` when its id is stored already.
    func insertKey(_ key: APIKeyRecord) async throws
    /// Replaces the key with the same id. - Throws: `JobStoreError.notFound`.
    func updateKey(_ key: APIKeyRecord) async throws
    /// Whether a key was deleted. Its jobs stay (with their `ownerKey`).
    func deleteKey(id: String) async throws -> Bool
    /// Sets `lastUsedAt` of several keys in one transaction; keys no longer stored are skipped.
    func touchKeys(_ uses: [String: Date]) async throws
    /// Adds the bytes keys' transfers fetched to what their buckets hold (one `KeyUsage` a key and bucket), and
    /// deletes the buckets before `purgingBefore`, in one transaction.
    func addKeyUsage(_ usage: [KeyUsage], purgingBefore: Int64) async throws
    /// The stored buckets of `keys` from bucket `since` on, in no order.
    func keyUsage(keys: [String], since: Int64) async throws -> [KeyUsage]
    /// Releases resources. Calls made afterwards fail (SQLite) or keep working (memory).
    func close() async
}

extension JobStore {
    /// Stores new jobs in one transaction (no idempotency record).
    public func insert(_ jobs: [JobRecord]) async throws -> [JobRecord] {
        try await insert(jobs, idempotencyRecord: nil)
    }

    /// One call per notice; stores that can do it in one transaction (SQLite, memory) implement it themselves.
    public func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws {
        for id in deleting { try await deleteNotice(id: id) }
        for retry in rescheduling { try await rescheduleNotice(id: retry.id, dueAt: retry.dueAt, attempts: retry.attempts) }
    }

    /// Replaces and deletes jobs in one transaction (no notices).
    public func apply(updates: [JobRecord], deletions: [String]) async throws {
        try await apply(updates: updates, deletions: deletions, notices: [])
    }

    /// Jobs oldest first, filtered by state when `states` is given.
    public func list(states: Set<JobState>?, after cursor: String?, limit: Int) async throws -> JobPage {
        try await list(JobFilter(states: states), after: cursor, limit: limit)
    }
}
