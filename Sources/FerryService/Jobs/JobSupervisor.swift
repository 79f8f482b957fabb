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
///
/// Files: this one holds the state, reading and the shared helpers; start-up is in `JobSupervisor+Recovery`,
/// creating in `+Creating`, user actions in `+Actions`, engine events in `+EngineEvents`.
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
        /// One node of several (`JobSupervisor+Cluster`); nil on a single node.
        var role: NodeRole?
        /// The id of the newest event published here, for lists and snapshots; nil: `ids.lastAllocated` (a single
        /// node; with several, `ids` only numbers placeholders and the `ClusterEventFeed` publishes).
        var publishedMark: (@Sendable () -> Int64)?
        /// Told each response an origin gave a job's transfer, with the job as changed by it (fetch-through's
        /// `FetchCache` keeps what the origin said about caching); called on the actor, so it must not block.
        var onResponded: (@Sendable (JobRecord, TransferMetadata) -> Void)?
        /// The API keys: their names for job views, their limits for scheduling.
        var keys = KeyRing()
        /// Which query parameters a dedupe key leaves out (`--cache-key-ignore`), as for a new job's.
        var keyRule: CacheKeyRule = .standard
        /// Returns once every engine event posted before the call is applied here (`TransferEventMailbox.barrier`):
        /// a pause the engine answers with no transfer left learns how that transfer ended before it answers.
        var eventsApplied: @Sendable () async -> Void = {}
    }

    /// The answer to one item of a create request.
    enum Created: Sendable {
        case created(JobRecord)
        case existing(JobRecord)
        case refused(JobsError)
    }

    /// What it was given, kept as given (readable from any thread); the parts used all over have short names below.
    nonisolated let dependencies: Dependencies
    nonisolated var store: any JobStore { dependencies.store }
    nonisolated var engine: any TransferControl { dependencies.engine }
    nonisolated var files: any JobFiles { dependencies.files }
    nonisolated var ids: EventIDAllocator { dependencies.ids }
    nonisolated var commits: CommitPipeline { dependencies.commits }
    nonisolated var metrics: ServiceMetrics { dependencies.metrics }
    nonisolated var logger: Logger { dependencies.logger }
    nonisolated var now: @Sendable () -> Date { dependencies.now }
    nonisolated var role: NodeRole? { dependencies.role }
    nonisolated var keys: KeyRing { dependencies.keys }
    /// Jobs and live rates; written only here, readable from any thread (`peek`).
    nonisolated var table: JobTable { dependencies.table }

    // The supervisor's state, used by its extensions (`JobSupervisor+Recovery`, `+Creating`, `+Actions`,
    // `+EngineEvents`) and by nothing else; the actor's isolation guards it.
    /// With several nodes: the jobs this node runs, when each became its own (`ownershipEpoch` then), and actions
    /// forwarded to another node waiting for their job to change (`JobSupervisor+Cluster`).
    var owned: Set<String> = [] { didSet { table.setLeasesHeld(owned.count) } }
    var ownedSince: [String: Int] = [:]
    var ownershipEpoch = 0
    /// With several nodes: whether the node stopped acting on its jobs for want of a lease renewal (`LeaseFence`),
    /// and the jobs it held then, stopped with their bytes kept until a renewal shows whether it still holds them.
    var fenced = false
    var suspended: Set<String> = []
    var changeWaiters: [String: [ChangeWaiter]] = [:]

    var jobs: JobTable.Jobs { table.jobs }
    /// Job ids in list order (store sequence, ascending).
    var order: [String] = []
    var rates: JobTable.Rates { table.rates }
    var byDedupeKey = DedupeIndex()
    /// How many jobs each API key holds (`maxJobs`).
    var ownedCounts: [String: Int64] = [:]
    /// What each API key fetched in the last 24 hours, and its jobs waiting for that to free (`bytesPerDay`).
    var dailyBytes = DailyByteQuota()
    /// Dedupe keys of jobs being inserted right now (between the store call and the table update).
    var pendingDedupe: [String: String] = [:]
    /// How many times each job's transfer restarted from zero (followers abort when it changes).
    var restarts: [String: Int] = [:]
    /// Jobs waiting for another's transfer, and those whose own file is being made from it.
    var sharing = SharedTransfers()

    init(_ dependencies: Dependencies) {
        self.dependencies = dependencies
    }

    /// The id of the newest event already reflected in the table.
    /// On one node, the last id allocated, or less while a job's end is held back (`JobTable.heldAfter`): what a list
    /// shows must reflect every event up to the id it answers with.
    var lastEventID: Int64 {
        if let mark = dependencies.publishedMark?() { return mark }
        let last = ids.lastAllocated
        return table.heldAfter().map { min($0, last) } ?? last
    }

    // MARK: Reading

    func job(_ id: String) -> (JobRecord, LiveRates?)? {
        table.entry(id)
    }

    /// The node running a job (several nodes; nil on one), read from any thread.
    nonisolated func peekNode(_ id: String) -> String? {
        table.node(of: id)
    }

    /// The id of the job with this `gid` (`JobGID`), read from any thread: aria2's RPC names jobs by gid.
    nonisolated func peekID(gid: String) -> String? {
        table.id(ofGID: gid.lowercased())
    }

    /// The name of the key owning a job (`"key"` in its view); nil for the administrator's.
    nonisolated func keyName(of job: JobRecord) -> String? {
        keys.name(of: job.ownerKey)
    }

    /// The job as the supervisor last left it, read from any thread without waiting for the actor.
    nonisolated func peek(_ id: String) -> (JobRecord, LiveRates?)? {
        table.entry(id)
    }

    /// A page of jobs, oldest first, and the id of the last event already reflected in it.
    func list(states: Set<JobState>?, after cursor: Int64?, limit: Int) -> (jobs: [(JobRecord, LiveRates?)], next: Int64?, eventID: Int64) {
        let eventID = lastEventID
        var start = 0
        if let cursor {
            start = lowerBound(sequence: cursor + 1)
        }
        var page: [(JobRecord, LiveRates?)] = []
        var index = start
        while index < order.count, page.count < limit {
            if let job = table.shown(order[index]), states?.contains(job.state) ?? true {
                page.append((job, rates[job.id]))
            }
            index += 1
        }
        var next: Int64?
        if page.count == limit, index < order.count, let last = page.last {
            // Only hand out a cursor when something may follow.
            let rest = order[index...].contains { id in table.shown(id).map { states?.contains($0.state) ?? true } ?? false }
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
        let eventID = lastEventID
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
        let eventID = lastEventID
        guard let (job, rates) = table.entry(id) else { return nil }
        return (job, rates, eventID)
    }

    func allJobs() -> [JobRecord] { order.compactMap { jobs[$0] } }

    func lowerBound(sequence: Int64) -> Int {
        var low = 0, high = order.count
        while low < high {
            let mid = (low + high) / 2
            if (jobs[order[mid]]?.sequence ?? 0) < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }

    // MARK: Helpers

    /// The webhook notices of a job that has just entered a state that has them (finished, failed, cancelled).
    /// A job finished without its SHA-256 yet has its `job.finished` notice held back until the digest comes
    /// (`TransferEvent.digested`), so receivers get the `sha256`.
    func notices(_ job: JobRecord, leaving before: JobState) -> [WebhookNotice] {
        guard job.state != before, let type = WebhookOutbox.noticeType(entering: job.state) else { return [] }
        if job.state == .finished, job.sha256 == nil, job.delivery == nil { return [] }
        return dependencies.webhooks.notices(type, for: job, at: now())
    }

    /// Hands the job's transfer to the engine. `url` is the one the request carried, parsed and checked once; a
    /// stored job's URL is its normalized text, parsed here (a row that does not parse fails with `invalid_url`).
    func submitTransfer(_ job: JobRecord, url: SubmittedURL? = nil) {
        guard let url = url ?? (try? SubmittedURL.parse(job.url, schemes: SubmittedURL.downloadSchemes)) else {
            let failure = JobFailure(code: .invalidURL, message: "the stored URL of this job cannot be parsed")
            Task { self.apply(.failed(id: job.id, failure)) }
            return
        }
        if waitsForDailyBytes(job) { return }
        engine.submit(spec(for: job, url: url))
    }

    func spec(for job: JobRecord, url: SubmittedURL) -> TransferSpec {
        var resume: ResumeValidators?
        if job.bytesReceived > 0 || job.etag != nil || job.lastModified != nil {
            resume = ResumeValidators(
                etag: job.etag, lastModified: job.lastModified, bytesExpected: job.bytesExpected, finalURL: job.finalURL)
        }
        var spec = TransferSpec(
            id: job.id, url: url, headers: job.headers.map { (name: $0.name, value: $0.value) },
            filename: job.filename, checksum: job.checksum,
            maxBytesPerSecond: job.maxBytesPerSecond, connections: job.connections, priority: job.priority, sequence: job.sequence,
            attempts: job.attempts, resume: resume, sources: Self.transferSources(job, url: url))
        spec.group = job.ownerKey
        // A delivery starts from a file whose digest is known (`JobRecord.hasDownloadedFile` reads it so); a node
        // of a cluster keeps the digest first too (its start-up, `joinCluster`, computes no missing digest).
        spec.digestBeforeFinish = job.delivery != nil || role != nil
        spec.readWhileWritten = job.tags.contains(FetchCache.tag)
        return spec
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
    func fail(_ job: inout JobRecord, _ failure: JobFailure) {
        job.state = .failed
        job.error = failure
        job.finishedAt = now()
        rates[job.id] = nil
        metrics.transferError(failure.code)
    }

    /// Hands a downloaded job's file to the engine for its delivery (its target was checked at submit; a stored one
    /// that no longer parses fails the delivery).
    func startDelivery(_ job: JobRecord) {
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

    /// The dedupe key of a job fetching `url` with `headers`, made as a new job's is (`JobDraft.dedupeKey`).
    func dedupeKey(url: SubmittedURL, headers: [HeaderField]) -> String {
        var draft = JobDraft(url: url, filename: nil, headers: headers, checksum: nil, priority: 0,
                             maxBytesPerSecond: nil, connections: nil, paused: false, dedupe: true)
        draft.keyRule = dependencies.keyRule
        return draft.dedupeKey
    }

    func insertIntoTable(_ job: JobRecord) {
        if jobs.updateValue(job, forKey: job.id) == nil {
            if let last = order.last, let lastJob = jobs[last], lastJob.sequence > job.sequence {
                order.insert(job.id, at: lowerBound(sequence: job.sequence))
            } else {
                order.append(job.id)
            }
            if let owner = job.ownerKey { ownedCounts[owner, default: 0] += 1 }
        }
        byDedupeKey.insert(job.id, key: job.dedupeKey)
    }

    func removeFromTable(_ id: String) {
        guard let job = jobs.removeValue(forKey: id) else { return }
        rates[id] = nil
        if let owner = job.ownerKey {
            ownedCounts[owner, default: 1] -= 1
            if ownedCounts[owner] == 0 { ownedCounts[owner] = nil }
        }
        let index = lowerBound(sequence: job.sequence)
        if index < order.count, order[index] == id { order.remove(at: index) } else { order.removeAll { $0 == id } }
        byDedupeKey.remove(id, key: job.dedupeKey)
    }

    func reindex(_ job: JobRecord, dedupeKey: String) {
        byDedupeKey.remove(job.id, key: job.dedupeKey)
        byDedupeKey.insert(job.id, key: dedupeKey)
    }

    func jobEvent(_ job: JobRecord, restartReason: String? = nil) -> ServerEvent {
        ServerEvent(id: ids.next(), kind: .job, jobID: job.id,
                    data: JobView.render(job, rates: rates[job.id], restartReason: restartReason, node: table.node(of: job.id),
                                         key: keyName(of: job)),
                    closesJobStream: job.state.isTerminal, owner: job.ownerKey)
    }

    func progressEvent(_ job: JobRecord, _ live: LiveRates) -> ServerEvent {
        ServerEvent(id: ids.next(), kind: .progress, jobID: job.id, data: JobView.renderProgress(job, rates: live),
                    owner: job.ownerKey)
    }

    func removedEvent(_ id: String, owner: String?) -> ServerEvent {
        var json = JSONWriter(capacity: 48)
        json.beginObject(); json.field("id", id); json.endObject()
        return ServerEvent(id: ids.next(), kind: .removed, jobID: id, data: json.bytes, closesJobStream: true, owner: owner)
    }
}
