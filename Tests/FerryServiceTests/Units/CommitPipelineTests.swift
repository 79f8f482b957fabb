import FerryStore
import Foundation
import Logging
import Testing
@testable import FerryService

/// Records what a pipeline published, in order.
private final class PublishedIDs: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [Int64] = []
    func append(_ events: [ServerEvent]) { lock.withLock { ids += events.map(\.id) } }
    var all: [Int64] { lock.withLock { ids } }
}

/// Allocates ids and hands changes over the way `JobSupervisor` does: some awaited (API calls),
/// some fire-and-forget (engine events), interleaved on one actor.
private actor ChangeMaker {
    let ids = EventIDAllocator(startingAfter: 0)
    let commits: CommitPipeline

    init(commits: CommitPipeline) { self.commits = commits }

    private func change() -> CommitPipeline.Change {
        CommitPipeline.Change(events: [ServerEvent(id: ids.next(), kind: .job, jobID: "j", data: Array("{}".utf8))])
    }

    func awaited() async throws { try await commits.submit(change()).durable() }
    func enqueued() { commits.enqueue(change()) }
}

/// A store that goes away: the first `failures` writes fail (through the pipeline's `beforePublish`).
private final class Outage: @unchecked Sendable {
    private let lock = NSLock()
    private var left: Int
    init(failures: Int) { left = failures }
    struct Gone: Error {}
    func pass() throws {
        try lock.withLock {
            guard left > 0 else { return }
            left -= 1
            throw Gone()
        }
    }
}

private final class HookCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
    func set(_ value: Int) { lock.withLock { count = value } }
}

@Suite("Commit pipeline")
struct CommitPipelineTests {
    @Test func eventsArePublishedInIdOrderWhateverAwaitsWhat() async throws {
        let published = PublishedIDs()
        let commits = CommitPipeline(store: MemoryJobStore(), logger: Logger(label: "test"),
                                     publish: { published.append($0) })
        let maker = ChangeMaker(commits: commits)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    if index % 2 == 0 { try await maker.awaited() } else { await maker.enqueued() }
                }
            }
            try await group.waitForAll()
        }
        await commits.flush()
        let ids = published.all
        #expect(ids.count == 400)
        #expect(ids == ids.sorted(), "published out of id order")
    }

    @Test func aTicketAwaitedAfterTheWriteStillReturns() async throws {
        let commits = CommitPipeline(store: MemoryJobStore(), logger: Logger(label: "test"), publish: { _ in })
        let ticket = commits.submit(CommitPipeline.Change())
        await commits.flush()
        try await ticket.durable()
    }

    @Test func aBatchTheStoreRefusedIsWrittenAgainMergedUntilItAnswers() async throws {
        let outage = Outage(failures: 3)
        let published = PublishedIDs()
        let store = MemoryJobStore()
        let commits = CommitPipeline(store: store, logger: Logger(label: "test"),
                                     beforePublish: { _ in try outage.pass() }, publish: { published.append($0) })
        func event(_ id: Int64, _ kind: ServerEvent.Kind) -> ServerEvent {
            ServerEvent(id: id, kind: kind, jobID: "a", data: Array("{}".utf8))
        }
        var job = JobRecord(id: "a", url: "https://o.example/a", state: .waiting, dedupeKey: "a", createdAt: Date())
        _ = try await store.insert([job])
        let ticket = commits.submit(CommitPipeline.Change(upserts: [job], events: [event(1, .job)]))
        commits.enqueue(CommitPipeline.Change(events: [event(2, .progress)]))
        job.state = .downloading
        commits.enqueue(CommitPipeline.Change(upserts: [job], events: [event(3, .job)]))
        await #expect(throws: Outage.Gone.self) { try await ticket.durable() }
        #expect(commits.failure != nil)
        await commits.flush()  // returns while the store is away

        // Written again with back-off (0.25 s, 0.5 s, 1 s): the job events once, in order; the stale progress not.
        let deadline = Date().addingTimeInterval(20)
        while published.all.isEmpty, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(published.all == [1, 3])
        #expect(commits.failure == nil)
        #expect(await store.job(id: "a")?.state == .downloading)
    }

    /// `onDurable` runs once, when a write that includes the change succeeded (a refused batch's hooks wait for the
    /// write that takes it), and before the change's events are published.
    @Test func durableHooksRunOnceTheWriteTakesTheChangeAndBeforeItsEvents() async throws {
        let outage = Outage(failures: 2)
        let runs = HookCount(), seenAtPublish = HookCount()
        let commits = CommitPipeline(store: MemoryJobStore(), logger: Logger(label: "test"),
                                     beforePublish: { _ in try outage.pass() },
                                     publish: { _ in seenAtPublish.set(runs.value) })
        var change = CommitPipeline.Change(events: [ServerEvent(id: 1, kind: .job, jobID: "a", data: Array("{}".utf8))])
        change.onDurable = [{ runs.add() }]
        let ticket = commits.submit(change)
        await #expect(throws: Outage.Gone.self) { try await ticket.durable() }
        #expect(runs.value == 0)
        let deadline = Date().addingTimeInterval(20)
        while runs.value == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        await commits.flush()
        #expect(runs.value == 1 && seenAtPublish.value == 1)
    }

    @Test func aMergedBatchKeepsEachJobsLastVersionAndEveryDeletion() {
        func job(_ id: String, _ state: JobState) -> JobRecord {
            JobRecord(id: id, url: "https://o.example/\(id)", state: state, dedupeKey: id, createdAt: Date())
        }
        let merged = CommitPipeline.merged([
            (CommitPipeline.Change(upserts: [job("a", .waiting), job("b", .waiting)]), nil),
            (CommitPipeline.Change(upserts: [job("a", .downloading)], deletions: ["b"]), nil),
            (CommitPipeline.Change(upserts: [job("c", .paused)]), nil),
        ])
        #expect(merged.upserts.map(\.id) == ["a", "c"])
        #expect(merged.upserts.first?.state == .downloading)
        #expect(merged.deletions == ["b"])
        #expect(CommitPipeline.retryDelay(afterFailures: 1) == .milliseconds(250))
        #expect(CommitPipeline.retryDelay(afterFailures: 3) == .seconds(1))
        #expect(CommitPipeline.retryDelay(afterFailures: 40) == .seconds(5))
    }
}
