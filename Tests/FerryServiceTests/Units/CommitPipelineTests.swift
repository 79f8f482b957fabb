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
}
