import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Owns every job's live state and is the only place that changes it.
///
/// User actions (create, pause, resume, cancel, patch, delete) and engine events both arrive here.
/// Each change is made to the in-memory table synchronously (no suspension between reading and
/// writing a job, so no update is lost), its events get their ids at once, and the change goes to
/// the `CommitPipeline`, which makes it durable before the events are published. API calls that
/// must answer with a durable result await that commit.
///
/// Owner: this actor. The engine (transfers and their files) and the store are called from here but own their own state.
actor JobSupervisor {
    struct Dependencies: Sendable {
        var store: any JobStore
        var engine: any TransferControl
        var files: any JobFiles
        var ids: EventIDAllocator
        var commits: CommitPipeline
        var metrics: ServiceMetrics
        var logger: Logger
        /// The job table, shared with the spool quota (which reads it from the engine's queue).
        var table: JobTable
        var quota: SpoolQuota?
        /// Makes the webhook notices of finished, failed and cancelled jobs, committed with the change.
        var webhooks = WebhookOutbox()
        var now: @Sendable () -> Date = { Date() }
    }

    /// The answer to one item of a create request.
    enum Created: Sendable {
        case created(JobRecord)
        case existing(JobRecord)
        case refused(JobsError)
    }

    private let store: any JobStore
    private let engine: any TransferControl
    private let files: any JobFiles
    private let ids: EventIDAllocator
    private let commits: CommitPipeline
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let quota: SpoolQuota?
    private let webhooks: WebhookOutbox
    private let now: @Sendable () -> Date

    /// Jobs and live rates; written only here, readable from any thread (`peek`).
    private let table: JobTable
    private var jobs: JobTable.Jobs { table.jobs }
    /// Job ids in list order (store sequence, ascending).
    private var order: [String] = []
    private var rates: JobTable.Rates { table.rates }
    private var byDedupeKey = DedupeIndex()
    /// Dedupe keys of jobs being inserted right now (between the store call and the table update).
    private var pendingDedupe: [String: String] = [:]
    /// How many times each job's transfer restarted from zero (followers abort when it changes).
    private var restarts: [String: Int] = [:]

    init(_ dependencies: Dependencies) {
        store = dependencies.store
        engine = dependencies.engine
        files = dependencies.files
        ids = dependencies.ids
        commits = dependencies.commits
        metrics = dependencies.metrics
        logger = dependencies.logger
        table = dependencies.table
        quota = dependencies.quota
        webhooks = dependencies.webhooks
        now = dependencies.now
    }

    // MARK: Reading

    func job(_ id: String) -> (JobRecord, LiveRates?)? {
        table.entry(id)
    }

    /// The job as the supervisor last left it, read from any thread without waiting for the actor.
    nonisolated func peek(_ id: String) -> (JobRecord, LiveRates?)? {
        table.entry(id)
    }

    /// A page of jobs, oldest first, and the id of the last event already reflected in it.
    func list(states: Set<JobState>?, after cursor: Int64?, limit: Int) -> (jobs: [(JobRecord, LiveRates?)], next: Int64?, eventID: Int64) {
        let eventID = ids.lastAllocated
        var start = 0
        if let cursor {
            start = lowerBound(sequence: cursor + 1)
        }
        var page: [(JobRecord, LiveRates?)] = []
        var index = start
        while index < order.count, page.count < limit {
            if let job = jobs[order[index]], states?.contains(job.state) ?? true {
                page.append((job, rates[job.id]))
            }
            index += 1
        }
        var next: Int64?
        if page.count == limit, index < order.count, let last = page.last {
            // Only hand out a cursor when something may follow.
            let rest = order[index...].contains { id in jobs[id].map { states?.contains($0.state) ?? true } ?? false }
            if rest { next = last.0.sequence }
        }
        return (page, next, eventID)
    }

    /// A page of the jobs that pass `filter` (a tag, a search text), and the id of the last event already reflected
    /// in it. The store chooses them (its tag index and search text, not a scan of the table here): everything
    /// changed before the call is made durable first, so the store knows each change up to the returned event id.
    /// Each job is then shown as the table has it now (live bytes and rates); one deleted meanwhile is left out.
    func list(matching filter: JobFilter, after cursor: Int64?, limit: Int) async throws
        -> (jobs: [(JobRecord, LiveRates?)], next: Int64?, eventID: Int64)
    {
        let eventID = ids.lastAllocated
        // An empty change: its ticket is durable once every change queued before it is (the pipeline writes in order).
        try await commitOrUnavailable(CommitPipeline.Change())
        let page: JobPage
        do {
            page = try await store.list(filter, after: cursor.map { JobCursor(sequence: $0).encoded }, limit: limit)
        } catch {
            throw JobsError.store(error)
        }
        let next = try page.next.map { text in
            do { return try JobCursor(decoding: text).sequence } catch { throw JobsError.store(error) }
        }
        return (page.jobs.compactMap { stored in table.entry(stored.id) }, next, eventID)
    }

    /// What a follower of a growing file needs to know.
    struct FollowStatus: Sendable {
        var state: JobState
        var bytesOnDisk: Int64
        var restarts: Int
        var filename: String?
    }

    func followStatus(_ id: String) -> FollowStatus? {
        guard let job = jobs[id] else { return nil }
        return FollowStatus(state: job.state, bytesOnDisk: job.bytesReceived, restarts: restarts[id] ?? 0, filename: job.filename)
    }

    /// A job and the id of the newest event already reflected in it (for a stream's first event).
    func snapshot(_ id: String) -> (job: JobRecord, rates: LiveRates?, eventID: Int64)? {
        guard let job = jobs[id] else { return nil }
        return (job, rates[id], ids.lastAllocated)
    }

    func counts() -> [JobState: Int] {
        var counts: [JobState: Int] = [:]
        for job in jobs.values { counts[job.state, default: 0] += 1 }
        return counts
    }

    /// Sum of smoothed speeds of running transfers.
    func totalSpeed() -> Double { rates.values.reduce(0) { $0 + $1.speed } }

    func allJobs() -> [JobRecord] { order.compactMap { jobs[$0] } }

    private func lowerBound(sequence: Int64) -> Int {
        var low = 0, high = order.count
        while low < high {
            let mid = (low + high) / 2
            if (jobs[order[mid]]?.sequence ?? 0) < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }

    // MARK: Start-up

    /// Loads every job, puts interrupted ones back in the engine's queue, and has the engine sweep the spool.
    /// Jobs that were downloading or waiting continue from the bytes on disk; paused stay paused.
    func recover() async throws {
        let stored = try await store.all().sorted { $0.sequence < $1.sequence }
        var resubmit: [JobRecord] = []
        var redeliver: [JobRecord] = []
        var changed: [JobRecord] = []
        var notices: [WebhookNotice] = []
        let found = files.recoverFiles(stored.map { job in
            let standing: RecoveringJob.Standing = switch job.state {
            case .finished, .delivering: .finished
            case .cancelled: .cancelled
            default: .unfinished
            }
            return RecoveringJob(id: job.id, filename: job.filename, standing: standing)
        })
        jobs.reserveCapacity(stored.count)
        order.reserveCapacity(stored.count)
        for var job in stored {
            var onDisk: Int64 = 0
            switch found[job.id] {
            case .finished(let finish):
                adopt(finish, into: &job)
                changed.append(job)
                notices += webhooks.notices(.finished, for: job, at: now())
            case .partial(let bytes):
                onDisk = bytes
            case nil:
                break
            }
            switch job.state {
            case .waiting, .downloading:
                if job.bytesReceived != onDisk || job.state != .waiting {
                    job.bytesReceived = onDisk
                    job.state = .waiting
                    job.updatedAt = now()
                    changed.append(job)
                }
                resubmit.append(job)
            case .delivering:
                // Interrupted uploads are sent again from the first byte.
                redeliver.append(job)
            case .paused, .failed:
                if job.hasDownloadedFile { break }
                if job.bytesReceived != onDisk {
                    job.bytesReceived = onDisk
                    changed.append(job)
                }
            case .finished, .cancelled:
                break
            }
            insertIntoTable(job)
        }
        if !changed.isEmpty {
            do {
                try await store.apply(updates: changed, deletions: [], notices: notices)
            } catch let error as JobStoreError where error.isOutOfSpace {
                // Start anyway on a full disk: the table holds these changes, and each job's next
                // change writes its whole record once there is room again.
                logger.warning("the disk is full: recovered jobs are not yet saved", metadata: ["error": "\(error)"])
            }
        }
        for job in resubmit { submitTransfer(job) }
        for job in redeliver { startDelivery(job) }
        logger.info("recovered jobs", metadata: ["jobs": "\(stored.count)", "resumed": "\(resubmit.count)"])
        // Reading every row freed many small buffers (SQLite's, the decoder's): give the pages back.
        FreeMemory.returnToSystem()
    }

    /// A download whose file was moved into `files/` just before a crash, when the store had not yet heard of it:
    /// the engine found the file whole, so the job is finished (no second download, no orphan).
    private func adopt(_ finish: FinishRecord, into job: inout JobRecord) {
        markFinished(&job, filename: finish.filename, size: finish.size, sha256: finish.sha256)
        job.updatedAt = now()
    }

    /// The job's file is in place, whole and verified.
    private func markFinished(_ job: inout JobRecord, filename: String, size: Int64, sha256: String) {
        job.state = .finished
        job.error = nil
        job.filename = filename
        job.sha256 = sha256
        job.bytesReceived = size
        job.bytesExpected = size
        job.finishedAt = now()
    }

    // MARK: Creating

    /// Creates jobs from validated drafts, one answer per draft, in order.
    /// Deduplicated drafts answer with the existing job; the rest are inserted in one transaction.
    /// - Parameter idempotencyRecord: for a request with an `Idempotency-Key`: makes the record of the
    ///   answer from the answers, stored in the same transaction as the new jobs.
    func create(_ drafts: [JobDraft],
                idempotencyRecord: (@Sendable ([Created]) -> IdempotencyRecord?)? = nil) async throws -> [Created] {
        var answers: [Created?] = Array(repeating: nil, count: drafts.count)
        var fresh: [(index: Int, record: JobRecord, draft: JobDraft)] = []
        var claimedHere: [String: Int] = [:]
        let created = now()
        let spoolFull = quota?.isFull ?? false
        for (index, draft) in drafts.enumerated() {
            let key = sharedKey(draft.dedupeKey)
            if draft.dedupe {
                if let existing = dedupeMatch(key) {
                    answers[index] = .existing(existing)
                    continue
                }
                if let earlier = claimedHere[key] {
                    answers[index] = .existing(fresh.first { $0.index == earlier }!.record)
                    continue
                }
                if pendingDedupe[key] != nil {
                    answers[index] = .refused(.creationInProgress)
                    continue
                }
            }
            if spoolFull, let budget = quota?.budget {
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
            if let requested = draft.filename {
                record.filename = files.reserveFilename(requested, for: record.id)
            }
            if draft.dedupe {
                claimedHere[key] = index
                pendingDedupe[key] = record.id
            }
            fresh.append((index, record, draft))
        }
        defer { for item in fresh where item.draft.dedupe { pendingDedupe.removeValue(forKey: item.record.dedupeKey) } }
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
        for (index, answer) in answers.enumerated() {
            if answer == nil, let key = Optional(drafts[index].dedupeKey), let job = dedupeMatch(key) {
                answers[index] = .existing(job)
            }
        }
        try await commits.submit(change).durable()
        for (item, record) in zip(fresh, inserted) where record.state == .waiting {
            submitTransfer(record, url: item.draft.url)
        }
        metrics.jobsCreated(inserted.count)
        return answers.map { $0 ?? .refused(.lostAnswer) }
    }

    /// `key`, or an equal key already indexed, whose storage it then shares (many jobs may fetch one URL).
    private func sharedKey(_ key: String) -> String {
        byDedupeKey.sharedKey(key)
    }

    /// `text`, or `other` when equal (a URL and its dedupe key, without headers, are the same text).
    static func shared(_ text: String, with other: String) -> String { text == other ? other : text }

    private func dedupeMatch(_ key: String) -> JobRecord? {
        let usable = byDedupeKey.ids(forKey: key).compactMap { jobs[$0] }.filter { job in
            switch job.state {
            case .cancelled, .failed: return false
            case .finished: return job.filename.map(files.hasFinishedFile(named:)) ?? false
            default: return true
            }
        }
        return usable.min { $0.sequence < $1.sequence }
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

    // MARK: User actions

    /// Pauses a job and answers with its final numbers: the job stops counting the engine's progress at once, and
    /// its `job` event and answer wait until the engine has flushed the bytes received so far to disk.
    func pause(_ id: String) async throws -> JobRecord {
        guard var job = jobs[id] else { throw JobsError.notFound(id: id) }
        switch JobAction.pause.outcome(in: job.state) {
        case .conflict: throw JobsError.notApplicable(JobAction.pause.conflictMessage(job.state))
        case .noOp: return job
        case .apply: break
        }
        if job.state == .delivering {
            job.state = .paused
            job.error = nil
            job.delivery = job.delivery?.restarted()
            rates[id] = nil
            jobs[id] = job
            let engine = self.engine
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                engine.stopDelivery(id: id) { continuation.resume() }
            }
            guard var latest = jobs[id] else { throw JobsError.notFound(id: id) }
            guard latest.state == .paused else { return latest }
            latest.updatedAt = now()
            jobs[id] = latest
            try await commitOrUnavailable(CommitPipeline.Change(upserts: [latest], events: [jobEvent(latest)]))
            return jobs[id] ?? latest
        }
        job.state = .paused
        job.error = nil
        jobs[id] = job
        rates[id] = nil
        let engine = self.engine
        let bytesOnDisk = await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
            engine.pause(id: id) { continuation.resume(returning: $0) }
        }
        // Cancelled, deleted, resumed or finished meanwhile: that later action's answer and events stand.
        guard var latest = jobs[id] else { throw JobsError.notFound(id: id) }
        guard latest.state == .paused else { return latest }
        if let bytesOnDisk { latest.bytesReceived = bytesOnDisk }
        latest.updatedAt = now()
        jobs[id] = latest
        try await commitOrUnavailable(CommitPipeline.Change(upserts: [latest], events: [jobEvent(latest)]))
        return jobs[id] ?? latest
    }

    func resume(_ id: String) async throws -> JobRecord {
        try await act(.resume, on: id) { job in
            job.error = nil
            if job.hasDownloadedFile, let filename = job.filename, self.files.hasFinishedFile(named: filename) {
                // Downloaded already: only the delivery is tried again.
                job.state = .delivering
                job.delivery = job.delivery?.restarted()
                self.startDelivery(job)
            } else {
                job.state = .waiting
                self.submitTransfer(job)
            }
        }
    }

    func cancel(_ id: String) async throws -> JobRecord {
        try await act(.cancel, on: id) { job in
            if job.delivery != nil {
                self.engine.stopDelivery(id: id, stopped: nil)
                // A downloaded file waiting for its delivery goes with the job's partial bytes.
                if job.hasDownloadedFile { self.files.discard(jobID: id, finishedFile: job.filename) }
            }
            job.state = .cancelled
            job.error = nil
            job.bytesReceived = 0
            job.finishedAt = self.now()
            self.rates[id] = nil
            self.engine.cancel(id: id)
        }
    }

    func update(_ id: String, _ patch: JobPatch) async throws -> JobRecord {
        guard let current = jobs[id] else { throw JobsError.notFound(id: id) }
        if patch.url != nil, case .conflict = JobAction.changeURL.outcome(in: current.state) {
            throw JobsError.notApplicable(JobAction.changeURL.conflictMessage(current.state))
        }
        // Tags alone are labels: they may change in every state; anything else follows the settings' rule.
        let action: JobAction = patch.changesOnlyTags ? .changeTags : .changeSettings
        return try await act(action, on: id) { job in
            if let tags = patch.tags { job.tags = tags }
            if let priority = patch.priority, priority != job.priority {
                job.priority = priority
                self.engine.updatePriority(id: id, priority)
            }
            if let rate = patch.maxBytesPerSecond {
                job.maxBytesPerSecond = rate
                self.engine.updateRateLimit(id: id, rate)
            }
            if let url = patch.url {
                job.url = url.normalized
                // A fresh link for the main URL makes it a source again.
                if var sources = job.sources, !sources.isEmpty {
                    sources[0] = JobSource(url: url.normalized, bytesReceived: sources[0].bytesReceived)
                    job.sources = sources
                }
                self.reindex(job, dedupeKey: Self.dedupeKey(url: url, headers: job.headers))
                job.dedupeKey = Self.dedupeKey(url: url, headers: job.headers)
                if job.state == .waiting || job.state == .downloading {
                    self.engine.updateURL(id: id, url)
                }
            }
        }
    }

    /// Stops the job if active and removes it and its file for good.
    func delete(_ id: String) async throws {
        guard let job = jobs[id] else { throw JobsError.notFound(id: id) }
        if job.delivery != nil { engine.stopDelivery(id: id, stopped: nil) }
        files.discard(jobID: id, finishedFile: job.state == .finished || job.hasDownloadedFile ? job.filename : nil)
        removeFromTable(id)
        restarts[id] = nil
        var change = CommitPipeline.Change()
        change.deletions = [id]
        change.events = [removedEvent(id)]
        try await commitOrUnavailable(change)
    }

    /// Removes the ended jobs `selection` picks, oldest first, with their files, in one commit; a
    /// `removed` event goes out for each. Used by retention and by `DELETE /api/v1/jobs`.
    func purge(_ selection: PurgeSelection) async throws -> [String] {
        let chosen = selection.select(Array(jobs.values))
        guard !chosen.isEmpty else { return [] }
        var change = CommitPipeline.Change()
        for job in chosen {
            files.discard(jobID: job.id, finishedFile: job.state == .finished ? job.filename : nil)
            removeFromTable(job.id)
            restarts[job.id] = nil
            change.deletions.append(job.id)
            change.events.append(removedEvent(job.id))
        }
        try await commitOrUnavailable(change)
        logger.info("purged ended jobs", metadata: ["jobs": "\(chosen.count)"])
        return chosen.map(\.id)
    }

    /// Applies an action by API.md's table: a no-op answers the job unchanged, a conflict throws 409.
    private func act(_ action: JobAction, on id: String, _ body: (inout JobRecord) -> Void) async throws -> JobRecord {
        guard var job = jobs[id] else { throw JobsError.notFound(id: id) }
        switch action.outcome(in: job.state) {
        case .conflict: throw JobsError.notApplicable(action.conflictMessage(job.state))
        case .noOp: return job
        case .apply: break
        }
        let before = job.state
        body(&job)
        job.updatedAt = now()
        jobs[id] = job
        try await commitOrUnavailable(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)],
                                                            notices: notices(job, leaving: before)))
        return jobs[id] ?? job
    }

    private func commitOrUnavailable(_ change: CommitPipeline.Change) async throws {
        // Queued here, on the actor, before suspending: enqueue order is event id order.
        let ticket = commits.submit(change)
        do { try await ticket.durable() } catch { throw JobsError.store(error) }
    }

    // MARK: Engine events

    /// Applies one engine event. Events of jobs that were deleted, cancelled or paused meanwhile are
    /// reduced to what still matters (bytes on disk), never to a state the user left.
    func apply(_ event: TransferEvent) {
        let id = event.id
        guard var job = jobs[id] else { return }
        let before = job.state
        let userStopped = job.state == .paused || job.state == .cancelled || job.state == .finished
        var events: [ServerEvent] = []
        var persist = true
        switch event {
        case .started(_, let offset):
            guard !userStopped else { return }
            job.state = .downloading
            job.error = nil
            job.attempts += 1
            job.bytesReceived = offset
            if job.startedAt == nil { job.startedAt = now() }
            rates[id] = LiveRates()
            events.append(jobEvent(job))
        case .responded(_, let metadata):
            guard job.state != .cancelled else { return }
            job.finalURL = metadata.finalURL
            job.filename = metadata.filename
            job.contentType = metadata.contentType ?? job.contentType
            job.bytesExpected = metadata.bytesExpected
            job.etag = metadata.etag
            job.lastModified = metadata.lastModified
            events.append(jobEvent(job))
        case .restarted(_, let reason):
            guard !userStopped else { return }
            job.bytesReceived = 0
            if var sources = job.sources {
                for index in sources.indices { sources[index].bytesReceived = 0 }
                job.sources = sources
            }
            restarts[id, default: 0] += 1
            events.append(jobEvent(job, restartReason: reason))
        case .progress(_, let progress):
            guard job.state == .downloading else { return }
            if progress.bytesReceived > job.bytesReceived {
                metrics.bytesDownloaded(progress.bytesReceived - job.bytesReceived)
            }
            job.bytesReceived = progress.bytesReceived
            job.bytesExpected = progress.bytesExpected ?? job.bytesExpected
            if var sources = job.sources, sources.count == progress.sourceBytes.count {
                for (index, bytes) in progress.sourceBytes.enumerated() { sources[index].bytesReceived = bytes }
                job.sources = sources
            }
            let live = LiveRates(speed: progress.bytesPerSecond, eta: progress.eta)
            rates[id] = live
            jobs[id] = job
            persist = false
            events.append(progressEvent(job, live))
        case .sourceDropped(_, let index, let failure):
            guard var sources = job.sources, sources.indices.contains(index) else { return }
            sources[index].error = failure
            job.sources = sources
            metrics.transferError(failure.code)
            events.append(jobEvent(job))
        case .waiting(_, let reason):
            guard !userStopped else { return }
            let error: JobFailure? = switch reason {
            case .queued: nil
            case .diskFull:
                JobFailure(code: .diskFull,
                         message: "free space is below the reserve (or a write hit ENOSPC); the download continues when space returns",
                         httpStatus: nil)
            case .retrying(let at, let attempt, let failure):
                JobFailure(code: .retrying,
                         message: "attempt \(attempt) failed (\(failure.code): \(failure.message)); retrying at \(Timestamp.rfc3339(at))",
                         httpStatus: failure.httpStatus)
            }
            // Bytes on disk are the truth: after a write hit ENOSPC, or a failed attempt, the last
            // progress counted bytes that were received but never written.
            if case .queued = reason {} else { job.bytesReceived = files.bytesOnDisk(jobID: id) }
            if job.state == .waiting && job.error == error && jobs[id]?.bytesReceived == job.bytesReceived { return }
            if case .retrying(_, _, let failure) = reason { metrics.transferError(failure.code) }
            if case .diskFull = reason { metrics.transferError(.diskFull) }
            job.state = .waiting
            job.error = error
            rates[id] = nil
            events.append(jobEvent(job))
        case .finished(_, let file):
            guard job.state != .cancelled else { return }
            markFinished(&job, filename: file.filename, size: file.size, sha256: file.sha256)
            job.contentType = file.contentType ?? job.contentType
            job.finalURL = file.finalURL
            job.etag = file.etag ?? job.etag
            job.lastModified = file.lastModified ?? job.lastModified
            if var sources = job.sources, sources.count == file.sourceBytes.count {
                for (index, bytes) in file.sourceBytes.enumerated() { sources[index].bytesReceived = bytes }
                job.sources = sources
            }
            rates[id] = nil
            if job.delivery != nil {
                // Downloaded and verified: the upload comes before `finished`.
                job.state = .delivering
                job.finishedAt = nil
                job.delivery = job.delivery?.restarted()
                startDelivery(job)
            }
            events.append(jobEvent(job))
        case .failed(_, let failure):
            guard !userStopped else { return }
            fail(&job, failure)
            events.append(jobEvent(job))
        case .paused(_, let bytes), .stopped(_, let bytes):
            // The bytes on disk; a pause's `job` event with them is published by `pause(_:)`, which waits for them.
            job.bytesReceived = bytes
            rates[id] = nil
        case .delivering(_, let progress):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            let resumed = delivery.state != .sending
            delivery.state = .sending
            delivery.bytesSent = progress.bytesSent
            delivery.bytesTotal = progress.bytesTotal
            if resumed {
                delivery.attempts += 1
                delivery.error = nil
                job.error = nil
            }
            job.delivery = delivery
            let live = LiveRates(speed: progress.bytesPerSecond, eta: progress.eta)
            rates[id] = live
            if resumed {
                events.append(jobEvent(job))
            } else {
                jobs[id] = job
                persist = false
                events.append(progressEvent(job, live))
            }
        case .deliveryWaiting(_, let at, let attempt, let failure):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            delivery.state = .pending
            delivery.bytesSent = 0
            delivery.httpStatus = failure.httpStatus
            delivery.error = failure
            job.delivery = delivery
            job.error = JobFailure(code: .retrying,
                                   message: "delivery attempt \(attempt) failed (\(failure.message)); retrying at \(Timestamp.rfc3339(at))",
                                   httpStatus: failure.httpStatus)
            rates[id] = nil
            metrics.transferError(failure.code)
            events.append(jobEvent(job))
        case .delivered(_, let status):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            delivery.state = .delivered
            delivery.httpStatus = status
            delivery.error = nil
            delivery.bytesSent = delivery.bytesTotal ?? delivery.bytesSent
            delivery.deliveredAt = now()
            job.delivery = delivery
            job.state = .finished
            job.error = nil
            job.finishedAt = now()
            rates[id] = nil
            if delivery.deleteAfter, let filename = job.filename {
                files.discard(jobID: id, finishedFile: filename)
            }
            events.append(jobEvent(job))
        case .deliveryFailed(_, let failure):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            delivery.state = .failed
            delivery.httpStatus = failure.httpStatus
            delivery.error = failure
            job.delivery = delivery
            fail(&job, failure)
            events.append(jobEvent(job))
        }
        job.updatedAt = now()
        jobs[id] = job
        let change = CommitPipeline.Change(upserts: persist ? [job] : [], events: events,
                                           notices: notices(job, leaving: before))
        if case .finished = event, job.state == .finished {
            // Once the store knows the job is finished, the spool's finish record has done its work.
            let ticket = commits.submit(change), files = self.files
            Task { if (try? await ticket.durable()) != nil { files.finishRecorded(jobID: id) } }
        } else {
            commits.enqueue(change)
        }
    }

    // MARK: Helpers

    /// The webhook notices of a job that has just entered a state that has them (finished, failed, cancelled).
    private func notices(_ job: JobRecord, leaving before: JobState) -> [WebhookNotice] {
        guard job.state != before, let type = WebhookOutbox.noticeType(entering: job.state) else { return [] }
        return webhooks.notices(type, for: job, at: now())
    }

    /// Hands the job's transfer to the engine. `url` is the one the request carried, parsed and checked once; a
    /// stored job's URL is its normalized text, parsed here (a row that does not parse fails with `invalid_url`).
    private func submitTransfer(_ job: JobRecord, url: SubmittedURL? = nil) {
        guard let url = url ?? (try? SubmittedURL.parse(job.url, schemes: SubmittedURL.downloadSchemes)) else {
            let failure = JobFailure(code: .invalidURL, message: "the stored URL of this job cannot be parsed")
            Task { self.apply(.failed(id: job.id, failure)) }
            return
        }
        engine.submit(spec(for: job, url: url))
    }

    func spec(for job: JobRecord, url: SubmittedURL) -> TransferSpec {
        var resume: ResumeValidators?
        if job.bytesReceived > 0 || job.etag != nil || job.lastModified != nil {
            resume = ResumeValidators(
                etag: job.etag, lastModified: job.lastModified, bytesExpected: job.bytesExpected, finalURL: job.finalURL)
        }
        return TransferSpec(
            id: job.id, url: url, headers: job.headers.map { (name: $0.name, value: $0.value) },
            filename: job.filename, checksum: job.checksum,
            maxBytesPerSecond: job.maxBytesPerSecond, connections: job.connections, priority: job.priority, sequence: job.sequence,
            attempts: job.attempts, resume: resume, sources: Self.transferSources(job, url: url))
    }

    /// The engine's view of a job's sources: the main URL as parsed for this submission, then each mirror (one whose
    /// stored URL no longer parses counts as dropped).
    static func transferSources(_ job: JobRecord, url: SubmittedURL) -> [TransferSource] {
        // Mirrors spread ranges of an http(s) file; a main URL changed to ftp/sftp by a PATCH runs alone.
        guard let sources = job.sources, !sources.isEmpty, SubmittedURL.webSchemes.contains(url.scheme) else { return [] }
        return sources.enumerated().map { index, source in
            if index == 0 { return TransferSource(url: url, bytesReceived: source.bytesReceived, dropped: source.error) }
            guard let parsed = try? SubmittedURL.parse(source.url) else {
                return TransferSource(url: url, bytesReceived: source.bytesReceived,
                                      dropped: source.error ?? JobFailure(code: .invalidURL, message: "the stored mirror URL cannot be parsed"))
            }
            return TransferSource(url: parsed, bytesReceived: source.bytesReceived, dropped: source.error)
        }
    }

    /// The job gave up (its download or its delivery) with `failure`.
    private func fail(_ job: inout JobRecord, _ failure: JobFailure) {
        job.state = .failed
        job.error = failure
        job.finishedAt = now()
        rates[job.id] = nil
        metrics.transferError(failure.code)
    }

    /// Hands a downloaded job's file to the engine for its delivery (its target was checked at submit; a stored one
    /// that no longer parses fails the delivery).
    private func startDelivery(_ job: JobRecord) {
        guard let delivery = job.delivery, let filename = job.filename else { return }
        guard let url = try? SubmittedURL.parse(delivery.url) else {
            let failure = JobFailure(code: .deliveryFailed, message: "the stored delivery URL of this job cannot be parsed")
            Task { self.apply(.deliveryFailed(id: job.id, failure)) }
            return
        }
        let method: DeliverySpec.Method = switch delivery.method {
        case .put: .put
        case .post: .post(field: delivery.field, fields: delivery.fields.map { (name: $0.name, value: $0.value) })
        }
        engine.deliver(DeliverySpec(
            id: job.id, url: url, method: method, headers: delivery.headers.map { (name: $0.name, value: $0.value) },
            path: files.location(ofFinished: filename), size: job.bytesExpected ?? job.bytesReceived, filename: filename,
            contentType: job.contentType, maxBytesPerSecond: job.maxBytesPerSecond))
    }

    static func dedupeKey(url: SubmittedURL, headers: [HeaderField]) -> String {
        JobDraft(url: url, filename: nil, headers: headers, checksum: nil, priority: 0,
                 maxBytesPerSecond: nil, connections: nil, paused: false, dedupe: true).dedupeKey
    }

    private func insertIntoTable(_ job: JobRecord) {
        if jobs.updateValue(job, forKey: job.id) == nil {
            if let last = order.last, let lastJob = jobs[last], lastJob.sequence > job.sequence {
                order.insert(job.id, at: lowerBound(sequence: job.sequence))
            } else {
                order.append(job.id)
            }
        }
        byDedupeKey.insert(job.id, key: job.dedupeKey)
    }

    private func removeFromTable(_ id: String) {
        guard let job = jobs.removeValue(forKey: id) else { return }
        rates[id] = nil
        let index = lowerBound(sequence: job.sequence)
        if index < order.count, order[index] == id { order.remove(at: index) } else { order.removeAll { $0 == id } }
        byDedupeKey.remove(id, key: job.dedupeKey)
    }

    private func reindex(_ job: JobRecord, dedupeKey: String) {
        byDedupeKey.remove(job.id, key: job.dedupeKey)
        byDedupeKey.insert(job.id, key: dedupeKey)
    }

    private func jobEvent(_ job: JobRecord, restartReason: String? = nil) -> ServerEvent {
        ServerEvent(id: ids.next(), kind: .job, jobID: job.id,
                    data: JobView.render(job, rates: rates[job.id], restartReason: restartReason),
                    closesJobStream: job.state.isTerminal)
    }

    private func progressEvent(_ job: JobRecord, _ live: LiveRates) -> ServerEvent {
        ServerEvent(id: ids.next(), kind: .progress, jobID: job.id, data: JobView.renderProgress(job, rates: live))
    }

    private func removedEvent(_ id: String) -> ServerEvent {
        var json = JSONWriter(capacity: 48)
        json.beginObject(); json.field("id", id); json.endObject()
        return ServerEvent(id: ids.next(), kind: .removed, jobID: id, data: json.bytes, closesJobStream: true)
    }
}
