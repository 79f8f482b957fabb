import FerryStore
import Foundation

/// A cluster store for the supervisor's unit tests: the jobs in a `MemoryJobStore`, ownership in a dictionary,
/// with `ClusterJobStore`'s rules (claim what needs running and nobody live owns; fenced commits; events numbered
/// in commit order). Leases do not run out by themselves: a test ends a node's with `expire(node:)`. Not a
/// replacement for `PostgresJobStore`'s own tests: it plays the other nodes' part.
actor FakeClusterStore: ClusterJobStore {
    let memory = MemoryJobStore()
    private(set) var owners: [String: String] = [:]
    private var expired: Set<String> = []
    private var stored: [StoredEvent] = []
    private(set) var sent: [(node: String, command: String)] = []
    private(set) var notified: [(channel: String, payload: String)] = []
    private var uploads: [String: String] = [:]
    /// Each job's epoch, raised when it changes hands.
    private(set) var epochs: [String: Int64] = [:]
    private var holders: [String: String] = [:]

    /// `node` takes `id`: its epoch is raised unless `node` was the last to take it.
    private func hold(_ id: String, by node: String) -> Int64 {
        if holders[id] != node { epochs[id, default: 0] += 1 }
        holders[id] = node
        return epochs[id, default: 0]
    }

    /// Gives `id` to `node` (another node claiming it).
    func own(_ id: String, by node: String) { owners[id] = node }
    /// `node`'s lease ran out: its jobs may be claimed.
    func expire(node: String) { expired.insert(node) }

    private func isLive(_ owner: String?) -> Bool { owner.map { !expired.contains($0) } ?? false }

    // MARK: ClusterJobStore

    func heartbeat(node: String, lease: Duration) async throws -> [ClusterNode] {
        expired.remove(node)
        let now = Date()
        return [ClusterNode(id: node, startedAt: now, heartbeatAt: now, leaseUntil: now + 15)]
    }

    func liveNodes() async throws -> [ClusterNode] { [] }

    func leave(node: String) async throws -> [String] { try await release(ids: Array(owners.keys), node: node) }

    func claim(node: String, limit: Int, lease: Duration, keyCaps: [String: Int64]) async throws -> [ClaimedJob] {
        let all = await memory.all()
        var room = keyCaps.mapValues { cap in Int(cap) }
        for job in all where job.state.needsRunning && isLive(owners[job.id]) {
            if let key = job.ownerKey, room[key] != nil { room[key]! -= 1 }
        }
        let candidates = all.filter { $0.state.needsRunning && !isLive(owners[$0.id]) }
            .sorted { ($0.priority, -$0.sequence) > ($1.priority, -$1.sequence) }
            .filter { job in
                guard let key = job.ownerKey, let left = room[key] else { return true }
                room[key] = left - 1
                return left > 0
            }
        return candidates.prefix(max(0, limit)).map { job in
            let previous = owners[job.id]
            owners[job.id] = node
            return ClaimedJob(job: job, previousOwner: previous, epoch: hold(job.id, by: node))
        }
    }

    func renew(node: String, lease: Duration) async throws -> Set<String> {
        Set(owners.filter { $0.value == node }.keys)
    }

    func acquire(id: String, node: String, lease: Duration) async throws -> JobAcquisition {
        guard let job = await memory.job(id: id) else { return .notFound }
        if let owner = owners[id], owner != node, isLive(owner) { return .owned(by: owner, leaseUntil: Date() + 15) }
        owners[id] = node
        return .acquired(job, epoch: hold(id, by: node))
    }

    func release(ids: [String], node: String) async throws -> [String] {
        let mine = ids.filter { owners[$0] == node }
        for id in mine { owners[id] = nil }
        return mine.sorted()
    }

    func liveOwners() async throws -> [String: String] { owners.filter { isLive($0.value) } }

    func downloadingJobs(ofKeys keys: [String]) async throws -> [String: [String: Int]] {
        var counts: [String: [String: Int]] = [:]
        for job in await memory.all() where job.state == .downloading {
            guard let key = job.ownerKey, keys.contains(key), let owner = owners[job.id], isLive(owner) else { continue }
            counts[key, default: [:]][owner, default: 0] += 1
        }
        return counts
    }

    func commit(_ change: ClusterChange, node: String) async throws -> ClusterCommit {
        var commit = ClusterCommit()
        commit.inserted = try await memory.insert(change.inserts, idempotencyRecord: change.idempotencyRecord)
        for id in Set(change.updates.map(\.id)).union(change.deletions) {
            if let owner = owners[id], owner != node {
                commit.refused[id] = owner
            } else if let held = change.heldUnder[id], held != epochs[id, default: 0] {
                commit.refused[id] = owners[id] ?? ""
            }
        }
        let updates = change.updates.filter { commit.refused[$0.id] == nil }
        let deletions = change.deletions.filter { commit.refused[$0] == nil }
        try await memory.apply(updates: updates, deletions: deletions,
                               notices: change.notices.filter { commit.refused[$0.jobID] == nil })
        for job in updates where !job.state.needsRunning { owners[job.id] = nil }
        for id in deletions { owners[id] = nil }
        for event in change.events where commit.refused[event.jobID] == nil {
            let next = StoredEvent(id: Int64(stored.count + 1), jobID: event.jobID, kind: event.kind, data: event.data,
                                   createdAt: Date(), ownerKey: event.ownerKey)
            stored.append(next)
            commit.events.append(next)
        }
        return commit
    }

    func events(after: Int64, limit: Int) async throws -> [StoredEvent] {
        Array(stored.filter { $0.id > after }.prefix(limit))
    }

    func eventWindow() async throws -> EventWindow { EventWindow(purgedThrough: 0, latest: stored.last?.id ?? 0) }
    func purgeEvents(keepingNewest count: Int?, createdBefore: Date?) async throws -> Int { 0 }
    func send(command: String, to node: String) async throws { sent.append((node, command)) }
    func notify(_ payloads: [String], on channel: String) async throws {
        notified.append(contentsOf: payloads.map { (channel, $0) })
    }
    func firstValue(forKey key: String, proposing value: String) async throws -> String {
        if let stored = await memory.value(forKey: key) { return stored }
        await memory.setValue(value, forKey: key)
        return value
    }

    func objectUpload(jobID: String) async throws -> String? { uploads[jobID] }

    func saveObjectUpload(_ document: String?, jobID: String, node: String, epoch: Int64?) async throws -> Bool {
        if let owner = owners[jobID], owner != node, isLive(owner) { return false }
        if let epoch, epoch != epochs[jobID, default: 0] { return false }
        if document != nil, await memory.job(id: jobID) == nil { return false }
        uploads[jobID] = document
        return true
    }

    // MARK: JobStore, from memory

    func insert(_ jobs: [JobRecord], idempotencyRecord: IdempotencyRecord?) async throws -> [JobRecord] {
        try await memory.insert(jobs, idempotencyRecord: idempotencyRecord)
    }
    func update(_ job: JobRecord) async throws { try await memory.update(job) }
    func apply(updates: [JobRecord], deletions: [String], notices: [WebhookNotice]) async throws {
        try await memory.apply(updates: updates, deletions: deletions, notices: notices)
    }
    func job(id: String) async throws -> JobRecord? { await memory.job(id: id) }
    func delete(id: String) async throws -> Bool { await memory.delete(id: id) }
    func list(_ filter: JobFilter, after cursor: String?, limit: Int) async throws -> JobPage {
        try await memory.list(filter, after: cursor, limit: limit)
    }
    func all() async throws -> [JobRecord] { await memory.all() }
    func jobs(dedupeKey: String) async throws -> [JobRecord] { await memory.jobs(dedupeKey: dedupeKey) }
    func counts() async throws -> [JobState: Int] { await memory.counts() }
    func idempotencyRecord(key: String) async throws -> IdempotencyRecord? { await memory.idempotencyRecord(key: key) }
    func saveIdempotencyRecord(_ record: IdempotencyRecord) async throws { await memory.saveIdempotencyRecord(record) }
    func purgeIdempotencyRecords(olderThan: Date) async throws { await memory.purgeIdempotencyRecords(olderThan: olderThan) }
    func value(forKey key: String) async throws -> String? { await memory.value(forKey: key) }
    func setValue(_ value: String, forKey key: String) async throws { await memory.setValue(value, forKey: key) }
    func saveRevokedSession(_ revocation: RevokedSession) async throws { await memory.saveRevokedSession(revocation) }
    func revokedSessions(expiringAfter date: Date) async throws -> [RevokedSession] {
        await memory.revokedSessions(expiringAfter: date)
    }
    func purgeRevokedSessions(expiringBy date: Date) async throws { await memory.purgeRevokedSessions(expiringBy: date) }
    func settings() async throws -> StoredSettings { await memory.settings() }
    func saveSettings(_ settings: StoredSettings) async throws { await memory.saveSettings(settings) }
    func saveFetchEntry(_ entry: FetchEntryRecord) async throws { await memory.saveFetchEntry(entry) }
    func fetchEntries() async throws -> [FetchEntryRecord] { await memory.fetchEntries() }
    func deleteFetchEntry(jobID: String) async throws { await memory.deleteFetchEntry(jobID: jobID) }
    func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) async throws {
        await memory.settleNotices(finishing: finishing, rescheduling: rescheduling)
    }
    func notices(_ filter: NoticeFilter, limit: Int) async throws -> [NoticeStatus] { await memory.notices(filter, limit: limit) }
    func notice(id: String) async throws -> NoticeStatus? { await memory.notice(id: id) }
    func retryNotice(id: String, at: Date) async throws -> WebhookNotice? { await memory.retryNotice(id: id, at: at) }
    func purgeSettledNotices(olderThan date: Date) async throws { await memory.purgeSettledNotices(olderThan: date) }
    func keys() async throws -> [APIKeyRecord] { await memory.keys() }
    func key(id: String) async throws -> APIKeyRecord? { await memory.key(id: id) }
    func insertKey(_ key: APIKeyRecord) async throws { try await memory.insertKey(key) }
    func updateKey(_ key: APIKeyRecord) async throws { try await memory.updateKey(key) }
    func deleteKey(id: String) async throws -> Bool { await memory.deleteKey(id: id) }
    func touchKeys(_ uses: [String: Date]) async throws { await memory.touchKeys(uses) }
    func addKeyUsage(_ usage: [KeyUsage], purgingBefore: Int64) async throws {
        await memory.addKeyUsage(usage, purgingBefore: purgingBefore)
    }
    func keyUsage(keys: [String], since: Int64) async throws -> [KeyUsage] { await memory.keyUsage(keys: keys, since: since) }
    func pendingNotices(limit: Int) async throws -> [WebhookNotice] { await memory.pendingNotices(limit: limit) }
    func rescheduleNotice(id: String, dueAt: Date, attempts: Int) async throws {
        await memory.rescheduleNotice(id: id, dueAt: dueAt, attempts: attempts)
    }
    func deleteNotice(id: String) async throws -> Bool { await memory.deleteNotice(id: id) }
    func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws {
        try await memory.settleNotices(deleting: deleting, rescheduling: rescheduling)
    }
    func close() async {}
}
