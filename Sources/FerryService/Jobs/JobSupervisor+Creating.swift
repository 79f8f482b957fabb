import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Creating jobs: deduplication, filename reservation and the one insert transaction.
extension JobSupervisor {
    // MARK: Creating

    /// Creates jobs from validated drafts, one answer per draft, in order.
    /// A deduplicated draft that asks nothing more than an existing job answers with it; one that asks more becomes a
    /// job following that job's transfer (`SharedTransfers`); the new jobs are inserted in one transaction.
    /// - Parameter idempotencyRecord: for a request with an `Idempotency-Key`: makes the record of the
    ///   answer from the answers, stored in the same transaction as the new jobs.
    /// - Parameter owner: the API key creating them (`JobAccess.owner`): the jobs are its own, dedupe looks only at its
    ///   jobs, and its `maxJobs` holds; nil for the administrator.
    func create(_ drafts: [JobDraft], owner: String? = nil,
                idempotencyRecord: (@Sendable ([Created]) -> IdempotencyRecord?)? = nil) async throws -> [Created] {
        try requireWritableStore()
        let maxJobs = owner.flatMap { keys.key(id: $0)?.limits.maxJobs }
        var held = owner.map { ownedCounts[$0] ?? 0 } ?? 0
        var answers: [Created?] = Array(repeating: nil, count: drafts.count)
        var fresh: [(index: Int, record: JobRecord, draft: JobDraft)] = []
        let created = now()
        let spoolFull = dependencies.quota?.isFull ?? false
        let mayShare = role == nil && files.sharesFinishedFiles
        for (index, draft) in drafts.enumerated() {
            let key = sharedKey(draft.dedupeKey)
            // A key's dedupe: its own jobs only, and its own pending creations.
            let pendingKey = (owner.map { $0 + "\n" } ?? "") + key
            // With dedupe: the job asked already (200), or a new one following the transfer of the first match.
            var follows: String?
            if draft.dedupe {
                let matches = dedupeMatches(key).filter { $0.ownerKey == owner }
                    + fresh.filter { $0.draft.dedupe && $0.record.dedupeKey == key }.map(\.record)
                if let same = matches.first(where: { !SharedTransfers.asksMore(draft, than: $0) }) {
                    answers[index] = .existing(same)
                    continue
                }
                if let first = matches.first {
                    if mayShare { follows = leader(sharedBy: first) }
                } else if pendingDedupe[pendingKey] != nil {
                    answers[index] = .refused(.creationInProgress)
                    continue
                }
            }
            if let maxJobs, held >= maxJobs {
                answers[index] = .refused(.keyJobLimit(limit: maxJobs))
                continue
            }
            if let refusal = dailyBytesRefusal(owner: owner) {
                answers[index] = .refused(refusal)
                continue
            }
            if spoolFull, let budget = dependencies.quota?.budget {
                answers[index] = .refused(.spoolFull(quota: budget.quota))
                continue
            }
            var record = JobRecord(
                id: Self.newID(), sequence: 0, url: Self.shared(draft.url.normalized, with: key), finalURL: nil,
                state: draft.paused ? .paused : .waiting,
                filename: nil, requestedFilename: draft.filename,
                bytesReceived: 0, bytesExpected: nil, contentType: nil, sha256: nil,
                checksum: draft.checksum, error: nil, attempts: 0, priority: draft.priority,
                maxBytesPerSecond: draft.maxBytesPerSecond, connections: draft.connections,
                headers: draft.headers, tags: draft.tags, dedupeKey: key, etag: nil, lastModified: nil,
                createdAt: created, startedAt: nil, finishedAt: nil, updatedAt: created)
            record.notify = draft.notify?.normalized
            record.delivery = draft.deliver
            if !draft.mirrors.isEmpty {
                record.sources = ([draft.url] + draft.mirrors).map { JobSource(url: $0.normalized) }
            }
            record.follows = follows
            record.ownerKey = owner
            // A follower without a filename of its own is named after its leader's file, when known.
            if let requested = draft.filename ?? follows.flatMap({ jobs[$0]?.filename }) {
                record.filename = files.reserveFilename(requested, for: record.id)
            }
            if draft.dedupe && follows == nil && pendingDedupe[pendingKey] == nil {
                pendingDedupe[pendingKey] = record.id
            }
            held += 1
            fresh.append((index, record, draft))
        }
        defer {
            for item in fresh {
                let pendingKey = (owner.map { $0 + "\n" } ?? "") + item.record.dedupeKey
                if pendingDedupe[pendingKey] == item.record.id { pendingDedupe.removeValue(forKey: pendingKey) }
            }
        }
        // The answers as they will be once the insert is done (records as the store keeps them).
        var record: IdempotencyRecord?
        if let idempotencyRecord {
            var provisional = answers
            for item in fresh { provisional[item.index] = .created(item.record.storedForm) }
            record = idempotencyRecord(provisional.map { $0 ?? .refused(.lostAnswer) })
        }
        guard !fresh.isEmpty else {
            // Nothing new: only the answer is stored (an empty insert saves just the record).
            if let record {
                do { _ = try await store.insert([], idempotencyRecord: record) } catch { throw JobsError.store(error) }
            }
            return answers.map { $0! }
        }
        let inserted: [JobRecord]
        do {
            inserted = try await store.insert(fresh.map(\.record), idempotencyRecord: record)
        } catch {
            for item in fresh { files.releaseFilename(for: item.record.id) }
            throw JobsError.store(error)
        }
        var change = CommitPipeline.Change()
        for (item, record) in zip(fresh, inserted) {
            insertIntoTable(record)
            change.events.append(jobEvent(record))
            answers[item.index] = .created(record)
        }
        try await commits.submit(change).durable()
        if let role {
            // Any node may run them: the first to claim them does.
            if inserted.contains(where: { $0.state == .waiting }) { role.wantsWork() }
        } else {
            for (item, record) in zip(fresh, inserted) where record.state == .waiting {
                if record.follows != nil { resettle(record.id) } else { submitTransfer(record, url: item.draft.url) }
            }
        }
        metrics.jobsCreated(inserted.count)
        return answers.map { $0 ?? .refused(.lostAnswer) }
    }

    /// `key`, or an equal key already indexed, whose storage it then shares (many jobs may fetch one URL).
    func sharedKey(_ key: String) -> String {
        byDedupeKey.sharedKey(key)
    }

    /// `text`, or `other` when equal (a URL and its dedupe key, without headers, are the same text).
    static func shared(_ text: String, with other: String) -> String { text == other ? other : text }

    /// The jobs a new job with this dedupe key may be answered with or share bytes with, oldest first: not cancelled
    /// or failed, and with their file still there if finished.
    /// - Parameter finishedAnywhere: a finished job counts without its file in this node's spool (fetch-through on
    ///   several nodes: its object is read from the object store, whichever node stored it).
    func dedupeMatches(_ key: String, finishedAnywhere: Bool = false) -> [JobRecord] {
        let usable = byDedupeKey.ids(forKey: key).compactMap { jobs[$0] }.filter { job in
            switch job.state {
            case .cancelled, .failed: return false
            case .finished: return job.filename.map { finishedAnywhere || files.hasFinishedFile(named: $0) } ?? false
            default: return true
            }
        }
        return usable.sorted { $0.sequence < $1.sequence }
    }

    /// The job whose transfer a new job sharing `match`'s bytes follows: `match`'s own leader while it waits for
    /// one, else `match`; nil when that job's transfer is stopped (the new job then gets one of its own).
    func leader(sharedBy match: JobRecord) -> String? {
        let id = match.follows.flatMap { jobs[$0] == nil ? nil : $0 } ?? match.id
        guard let leader = jobs[id] else { return id }  // created in the same request: its transfer starts with it
        let fileExists = leader.filename.map(files.hasFinishedFile(named:)) ?? false
        return SharedTransfers.step(leader: leader, fileExists: fileExists) == .runAlone ? nil : id
    }

    /// 128 random bits as 26 lower-case base32 characters: opaque and URL-safe.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        let high = generator.next() as UInt64, low = generator.next() as UInt64
        var bits = (high, low)
        var out = ""
        for _ in 0..<26 {
            out.append(alphabet[Int(bits.1 & 31)])
            bits.1 = (bits.1 >> 5) | ((bits.0 & 31) << 59)
            bits.0 >>= 5
        }
        return out
    }
}
