import Foundation

/// A `JobStore` kept in memory: for tests and an ephemeral mode. Nothing survives the process.
///
/// An actor owns the state. It behaves as `SQLiteJobStore` does (sequences never reused, whole-batch inserts,
/// dates kept to the millisecond, the same cursors and errors), which the shared contract tests check.
/// `close()` does nothing; the store stays usable.
public actor MemoryJobStore: JobStore {
    /// Jobs in sequence order (inserts append, as sequences only grow).
    private var ordered: [JobRecord] = []
    private var sequenceByID: [String: Int64] = [:]
    private var lastSequence: Int64 = 0
    private var idempotencyRecords: [String: IdempotencyRecord] = [:]
    private var meta: [String: String] = [:]
    private var revocations: [String: RevokedSession] = [:]
    private var savedSettings = StoredSettings()
    /// Webhook notices by id.
    private var outbox: [String: WebhookNotice] = [:]
    /// Fetch-through's entries by job id (removed with their job, as the other stores do).
    private var fetchEntriesByJob: [String: FetchEntryRecord] = [:]
    /// Notices delivered or given up, by id; the last status of pending ones.
    private var settled: [String: NoticeStatus] = [:]
    private var lastStatuses: [String: Int] = [:]
    /// API keys by id.
    private var apiKeys: [String: APIKeyRecord] = [:]
    /// Bytes fetched by key, then bucket.
    private var usage: [String: [Int64: Int64]] = [:]

    public init() {}

    public func insert(_ jobs: [JobRecord], idempotencyRecord: IdempotencyRecord?) throws -> [JobRecord] {
        var seen = Set<String>()
        for job in jobs where sequenceByID[job.id] != nil || !seen.insert(job.id).inserted {
            throw JobStoreError.duplicateID(job.id)
        }
        let stored = jobs.map { job in
            lastSequence += 1
            var record = job.storedForm
            record.sequence = lastSequence
            return record
        }
        for record in stored { sequenceByID[record.id] = record.sequence }
        ordered.append(contentsOf: stored)
        if let idempotencyRecord { saveIdempotencyRecord(idempotencyRecord) }
        return stored
    }

    public func update(_ job: JobRecord) throws {
        guard let index = index(of: job.id) else { throw JobStoreError.notFound(job.id) }
        var record = job.storedForm
        record.sequence = ordered[index].sequence
        ordered[index] = record
    }

    public func apply(updates: [JobRecord], deletions: [String], notices: [WebhookNotice]) throws {
        var seen = Set<String>()
        for notice in notices where outbox[notice.id] != nil || !seen.insert(notice.id).inserted {
            throw JobStoreError.duplicateID(notice.id)
        }
        for job in updates { try? update(job) }
        for id in deletions { _ = delete(id: id) }
        for notice in notices { outbox[notice.id] = notice.storedForm }
    }

    public func job(id: String) -> JobRecord? {
        index(of: id).map { ordered[$0] }
    }

    public func delete(id: String) -> Bool {
        guard let index = index(of: id) else { return false }
        ordered.remove(at: index)
        sequenceByID[id] = nil
        fetchEntriesByJob[id] = nil
        return true
    }

    public func list(_ filter: JobFilter, after cursor: String?, limit: Int) throws -> JobPage {
        let after = try cursor.map { try JobCursor(decoding: $0).sequence } ?? 0
        let limit = JobPage.clampedLimit(limit)
        var jobs: [JobRecord] = []
        for record in ordered[firstIndex(after: after)...] where filter.matches(record) {
            if jobs.count == limit {
                return JobPage(jobs: jobs, next: JobCursor(sequence: jobs[jobs.count - 1].sequence).encoded)
            }
            jobs.append(record)
        }
        return JobPage(jobs: jobs, next: nil)
    }

    public func all() -> [JobRecord] {
        ordered
    }

    public func jobs(dedupeKey: String) -> [JobRecord] {
        ordered.filter { $0.dedupeKey == dedupeKey }
    }

    public func counts() -> [JobState: Int] {
        var counts = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
        for record in ordered { counts[record.state, default: 0] += 1 }
        return counts
    }

    public func idempotencyRecord(key: String) -> IdempotencyRecord? {
        idempotencyRecords[key]
    }

    public func saveIdempotencyRecord(_ record: IdempotencyRecord) {
        idempotencyRecords[record.key] = record.storedForm
    }

    public func purgeIdempotencyRecords(olderThan date: Date) {
        let cutoff = StoredDate.normalize(date)
        idempotencyRecords = idempotencyRecords.filter { $0.value.createdAt >= cutoff }
    }

    public func value(forKey key: String) -> String? {
        meta[key]
    }

    public func setValue(_ value: String, forKey key: String) {
        meta[key] = value
    }

    public func saveRevokedSession(_ revocation: RevokedSession) {
        revocations[revocation.nonce] = revocation.storedForm
    }

    public func revokedSessions(expiringAfter date: Date) -> [RevokedSession] {
        let after = StoredDate.normalize(date)
        return revocations.values.filter { $0.expiresAt > after }
            .sorted { ($0.expiresAt, $0.nonce) < ($1.expiresAt, $1.nonce) }
    }

    public func purgeRevokedSessions(expiringBy date: Date) {
        let by = StoredDate.normalize(date)
        revocations = revocations.filter { $0.value.expiresAt > by }
    }

    public func saveFetchEntry(_ entry: FetchEntryRecord) {
        fetchEntriesByJob[entry.jobID] = entry.storedForm
    }

    public func fetchEntries() -> [FetchEntryRecord] {
        fetchEntriesByJob.values.sorted { $0.jobID < $1.jobID }
    }

    public func deleteFetchEntry(jobID: String) {
        fetchEntriesByJob.removeValue(forKey: jobID)
    }

    public func settings() -> StoredSettings {
        savedSettings
    }

    public func saveSettings(_ settings: StoredSettings) {
        savedSettings = savedSettings.merging(settings)
    }

    public func pendingNotices(limit: Int) -> [WebhookNotice] {
        Array(outbox.values.sorted { ($0.dueAt, $0.createdAt, $0.id) < ($1.dueAt, $1.createdAt, $1.id) }.prefix(max(0, limit)))
    }

    public func rescheduleNotice(id: String, dueAt: Date, attempts: Int) {
        outbox[id]?.dueAt = StoredDate.normalize(dueAt)
        outbox[id]?.attempts = attempts
    }

    @discardableResult
    public func deleteNotice(id: String) -> Bool {
        lastStatuses[id] = nil
        return outbox.removeValue(forKey: id) != nil
    }

    public func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) {
        for id in deleting { deleteNotice(id: id) }
        for retry in rescheduling { rescheduleNotice(retry) }
    }

    private func rescheduleNotice(_ retry: WebhookNoticeRetry) {
        rescheduleNotice(id: retry.id, dueAt: retry.dueAt, attempts: retry.attempts)
        if outbox[retry.id] != nil { lastStatuses[retry.id] = retry.lastStatus }
    }

    public func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) {
        for item in finishing {
            guard var notice = outbox.removeValue(forKey: item.id) ?? settled[item.id]?.notice else { continue }
            notice.attempts = item.attempts
            lastStatuses[item.id] = nil
            settled[item.id] = NoticeStatus(notice: notice, state: item.state, lastStatus: item.lastStatus,
                                            settledAt: StoredDate.normalize(item.at))
        }
        for retry in rescheduling { rescheduleNotice(retry) }
    }

    public func notices(_ filter: NoticeFilter, limit: Int) -> [NoticeStatus] {
        let pending = outbox.values.map { NoticeStatus(notice: $0, state: .pending, lastStatus: lastStatuses[$0.id]) }
        return (pending + settled.values)
            .filter { status in
                (filter.state.map { $0 == status.state } ?? true) && (filter.jobID.map { $0 == status.notice.jobID } ?? true)
                    && (filter.ownerKey.map { owner in job(id: status.notice.jobID)?.ownerKey == owner } ?? true)
            }
            .sorted { ($0.notice.createdAt, $0.notice.id) < ($1.notice.createdAt, $1.notice.id) }
            .prefix(max(0, limit)).map { $0 }
    }

    public func notice(id: String) -> NoticeStatus? {
        if let notice = outbox[id] { return NoticeStatus(notice: notice, state: .pending, lastStatus: lastStatuses[id]) }
        return settled[id]
    }

    public func retryNotice(id: String, at: Date) -> WebhookNotice? {
        if let failed = settled[id], failed.state == .failed {
            settled[id] = nil
            outbox[id] = failed.notice
            lastStatuses[id] = failed.lastStatus
        }
        guard outbox[id] != nil else { return nil }
        outbox[id]?.dueAt = StoredDate.normalize(at)
        return outbox[id]
    }

    public func purgeSettledNotices(olderThan date: Date) {
        settled = settled.filter { ($0.value.settledAt ?? .distantFuture) >= date }
    }

    public func close() {}

    // MARK: Private

    private func index(of id: String) -> Int? {
        guard let sequence = sequenceByID[id] else { return nil }
        let index = firstIndex(after: sequence - 1)
        return index < ordered.count && ordered[index].sequence == sequence ? index : nil
    }

    /// The position of the first job whose sequence is greater than `sequence` (binary search).
    private func firstIndex(after sequence: Int64) -> Int {
        var low = 0, high = ordered.count
        while low < high {
            let middle = (low + high) / 2
            if ordered[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low
    }

    // MARK: API keys

    public func keys() -> [APIKeyRecord] {
        apiKeys.values.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func key(id: String) -> APIKeyRecord? { apiKeys[id] }

    public func insertKey(_ key: APIKeyRecord) throws {
        guard apiKeys[key.id] == nil, !apiKeys.values.contains(where: { $0.digest == key.digest }) else {
            throw JobStoreError.duplicateID(key.id)
        }
        apiKeys[key.id] = key.storedForm
    }

    public func updateKey(_ key: APIKeyRecord) throws {
        guard apiKeys[key.id] != nil else { throw JobStoreError.notFound(key.id) }
        apiKeys[key.id] = key.storedForm
    }

    public func deleteKey(id: String) -> Bool {
        apiKeys.removeValue(forKey: id) != nil
    }

    public func touchKeys(_ uses: [String: Date]) {
        for (id, date) in uses where apiKeys[id] != nil { apiKeys[id]?.lastUsedAt = StoredDate.normalize(date) }
    }

    public func addKeyUsage(_ added: [KeyUsage], purgingBefore: Int64) {
        for item in added { usage[item.key, default: [:]][item.bucket, default: 0] += item.bytes }
        for key in usage.keys {
            usage[key] = usage[key]?.filter { $0.key >= purgingBefore }
            if usage[key]?.isEmpty == true { usage[key] = nil }
        }
    }

    public func keyUsage(keys: [String], since: Int64) -> [KeyUsage] {
        keys.flatMap { key in
            (usage[key] ?? [:]).filter { $0.key >= since }.map { KeyUsage(key: key, bucket: $0.key, bytes: $0.value) }
        }
    }
}
