import Testing
@testable import FerryService

/// A deleted job leaves nothing behind in the supervisor: a long run of jobs created and deleted (the load suite's
/// clients do it thousands of times a minute) keeps its structures at the size of the jobs that remain.
@Suite struct DeletedJobTracesTests {
    @Test func jobsCreatedAndDeletedLeaveNoEntries() async throws {
        let h = SupervisorHarness()
        var kept: [String] = []
        for index in 0..<300 {
            let job = try await h.create("https://example.com/file\(index).bin")
            if index % 100 == 0 { kept.append(job.id) } else { try await h.supervisor.delete(job.id) }
        }
        await h.settle()
        #expect(await h.supervisor.order == kept)
        #expect(await h.supervisor.byDedupeKey.count == kept.count)
        #expect(await h.supervisor.restarts.isEmpty)
        #expect(await h.supervisor.pendingDedupe.isEmpty)
        #expect(await h.supervisor.allJobs().map(\.id) == kept)
        #expect(await h.supervisor.jobs.values.count == kept.count)
        let counts = h.supervisor.table.entryCounts
        #expect(counts.jobs == kept.count && counts.gids == kept.count, "the gid index aria2's RPC reads forgets them too")
        #expect(counts.rates <= kept.count && counts.nodes == 0 && counts.heldBack == 0)
        #expect(counts.listings == kept.count, "aria2's lists read a listing per job kept")
        for id in kept { try await h.supervisor.delete(id) }
        #expect(await h.supervisor.order.isEmpty)
        #expect(await h.supervisor.byDedupeKey.count == 0)
        #expect(await h.supervisor.jobs.values.isEmpty)
        #expect(await h.supervisor.rates.values.isEmpty)
        #expect(h.supervisor.table.entryCounts.gids == 0)
        #expect(h.supervisor.table.entryCounts.listings == 0)
    }
}
