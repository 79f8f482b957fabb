import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging
@testable import FerryService

/// A supervisor over a memory store, a fake engine and a fixed clock, with the events it published.
struct SupervisorHarness {
    let supervisor: JobSupervisor
    let engine: FakeEngine
    let store: MemoryJobStore
    let published: PublishedEvents
    let commits: CommitPipeline

    init(quota: Int64? = nil, engine: FakeEngine = FakeEngine(), store: MemoryJobStore = MemoryJobStore(),
         webhookURL: String? = nil, keyRule: CacheKeyRule = .standard, keys: KeyRing = KeyRing(),
         beforePublish: @escaping @Sendable ([ServerEvent]) async throws -> Void = { _ in },
         eventsApplied: @escaping @Sendable () async -> Void = {}) {
        let published = PublishedEvents()
        let commits = CommitPipeline(store: store, logger: Logger(label: "test"), beforePublish: beforePublish,
                                     publish: { published.append($0) })
        let table = JobTable()
        self.supervisor = JobSupervisor(.init(
            store: store, engine: engine, files: engine, ids: EventIDAllocator(startingAfter: 0), commits: commits,
            metrics: ServiceMetrics(), logger: Logger(label: "test"), table: table,
            quota: quota.map { SpoolQuota(quota: $0, table: table) },
            webhooks: WebhookOutbox(globalURL: webhookURL),
            now: { Date(timeIntervalSince1970: 1_800_000_000) }, keys: keys, keyRule: keyRule, eventsApplied: eventsApplied))
        self.engine = engine
        self.store = store
        self.published = published
        self.commits = commits
    }

    /// A draft for `url` (validated as the API does).
    static func draft(_ url: String, _ change: (inout JobDraft.Body) -> Void = { _ in }) throws -> JobDraft {
        var body = JobDraft.Body()
        body.url = url
        change(&body)
        return try JobDraft.validate(body, destinations: AddressPolicy())
    }

    /// Creates one job and returns it.
    func create(_ url: String, _ change: (inout JobDraft.Body) -> Void = { _ in }) async throws -> JobRecord {
        let answers = try await supervisor.create([Self.draft(url, change)])
        guard case .created(let job) = answers.first else { throw HarnessError.notCreated("\(answers)") }
        return job
    }

    /// The job as readers see it once what was queued so far is durable (an end is shown only then).
    func job(_ id: String) async -> JobRecord? {
        await commits.flush()
        return await supervisor.job(id)?.0
    }

    /// Waits until the commit pipeline has written and published what was queued so far.
    func settle() async { await commits.flush() }

    /// Polls `condition` (for work the supervisor leaves to a task of its own) for up to five seconds.
    func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_000 where !condition() { try? await Task.sleep(nanoseconds: 5_000_000) }
        return condition()
    }
}

enum HarnessError: Error { case notCreated(String) }

/// Events a supervisor published, in order (any thread).
final class PublishedEvents: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [ServerEvent] = []
    func append(_ batch: [ServerEvent]) { lock.withLock { events += batch } }
    var all: [ServerEvent] { lock.withLock { events } }

    /// The `job` events' data for one job, decoded.
    func jobEvents(_ id: String) -> [[String: Any]] {
        all.filter { $0.kind == .job && $0.jobID == id }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.data)) as? [String: Any]
        }
    }
}
