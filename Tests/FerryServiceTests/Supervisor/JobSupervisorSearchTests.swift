import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// `JobSupervisor.list(matching:)`: the store picks the jobs (tag, search text), after every change made so far is
/// durable; each is shown as the table has it now.
@Suite("Job supervisor, tag and search lists")
struct JobSupervisorSearchTests {
    @Test func aChangeNotYetWrittenIsFoundAndTheLiveJobShown() async throws {
        let h = SupervisorHarness()
        let job = try await h.create("http://example.org/download?id=1") { $0.tags = ["iso"] }
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        // The name arrives with the response: queued for the store, not awaited by anyone.
        await h.supervisor.apply(.responded(id: job.id, TransferMetadata(
            finalURL: "http://example.org/download?id=1", filename: "Learnt-Later.iso", contentType: nil, bytesExpected: 1_000, etag: nil,
            lastModified: nil, offset: 0)))
        await h.supervisor.apply(.progress(id: job.id, TransferProgress(bytesReceived: 400, bytesExpected: 1_000,
                                                                        bytesPerSecond: 100, eta: 6)))
        let page = try await h.supervisor.list(matching: JobFilter(text: "LEARNT-later"), after: nil, limit: 10)
        #expect(page.jobs.map(\.0.id) == [job.id])
        #expect(page.jobs.first?.0.bytesReceived == 400, "the table's live bytes, not the stored ones")
        #expect(page.jobs.first?.1?.speed == 100)
        #expect(page.next == nil)
        #expect(page.eventID >= 3)
        let none = try await h.supervisor.list(matching: JobFilter(states: [.paused], tag: "iso"), after: nil, limit: 10)
        #expect(none.jobs.isEmpty)
    }

    @Test func pagesOfATagCarryTheCursorOfTheLastJob() async throws {
        let h = SupervisorHarness()
        var tagged: [String] = []
        for i in 0..<5 {
            let job = try await h.create("http://example.org/\(i).bin") {
                $0.paused = true
                $0.tags = i % 2 == 0 ? ["even"] : ["odd"]
            }
            if i % 2 == 0 { tagged.append(job.id) }
        }
        let first = try await h.supervisor.list(matching: JobFilter(tag: "even"), after: nil, limit: 2)
        #expect(first.jobs.map(\.0.id) == Array(tagged.prefix(2)))
        let cursor = try #require(first.next)
        #expect(cursor == first.jobs.last?.0.sequence)
        let second = try await h.supervisor.list(matching: JobFilter(tag: "even"), after: cursor, limit: 2)
        #expect(second.jobs.map(\.0.id) == [tagged[2]])
        #expect(second.next == nil)
    }
}
