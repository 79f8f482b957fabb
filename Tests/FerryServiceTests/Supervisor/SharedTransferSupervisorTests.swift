import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// Jobs following another's transfer (`SharedTransfers`), driven through the supervisor with a fake engine.
@Suite("Job supervisor, shared transfers")
struct SharedTransferSupervisorTests {
    let url = "http://example.org/file.iso"

    func createFollower(_ h: SupervisorHarness, _ change: @escaping (inout JobDraft.Body) -> Void) async throws -> JobRecord {
        try await h.create(url, change)
    }

    @Test func aFollowerWaitsForItsLeaderThenGetsItsOwnFileAndDelivery() async throws {
        let h = SupervisorHarness()
        let leader = try await h.create(url)
        let follower = try await createFollower(h) { $0.deliver = JobDraft.DeliverBody(url: "http://example.org/up") }
        #expect(follower.follows == leader.id)
        #expect(h.engine.log == ["submit \(leader.id)"], "no second transfer")
        await h.supervisor.apply(.started(id: leader.id, offset: 0))
        h.engine.finishedFiles.insert("file.iso")
        await h.supervisor.apply(.finished(id: leader.id, JobSupervisorTests.file("file.iso", size: 1_000)))
        #expect(await h.eventually { h.engine.log.contains("deliver \(follower.id)") })
        let shared = try #require(await h.job(follower.id))
        #expect(shared.state == .delivering && shared.follows == nil && shared.filename == "file.iso (1)")
        #expect(shared.sha256 == String(repeating: "a", count: 64) && shared.bytesReceived == 1_000)
        #expect(h.engine.log.contains("share \(follower.id) file.iso"))
        #expect(await h.job(leader.id)?.state == .finished)
    }

    @Test func aFollowerOfAFinishedJobFailsAWrongChecksumAlone() async throws {
        let h = SupervisorHarness()
        let leader = try await h.create(url)
        h.engine.finishedFiles.insert("file.iso")
        await h.supervisor.apply(.finished(id: leader.id, JobSupervisorTests.file("file.iso")))
        let follower = try await createFollower(h) { $0.sha256 = String(repeating: "b", count: 64) }
        #expect(follower.filename == "file.iso (1)", "named after its leader's file at once")
        #expect(await h.eventually { h.engine.log.contains("share \(follower.id) file.iso") })
        #expect(await h.eventually { h.supervisor.peek(follower.id)?.0.state == .failed })
        #expect(await h.job(follower.id)?.error?.code == .checksumMismatch)
        #expect(await h.job(leader.id)?.state == .finished)
        // The right digest asks nothing more than the leader does.
        let again = try await h.supervisor.create([SupervisorHarness.draft(url) { $0.sha256 = String(repeating: "a", count: 64) }])
        guard case .existing(let existing) = again.first else { Issue.record("\(again)"); return }
        #expect(existing.id == leader.id)
    }

    @Test func followersOfAStoppedLeaderGetTransfersOfTheirOwn() async throws {
        let h = SupervisorHarness()
        let cancelled = try await h.create(url)
        let first = try await createFollower(h) { $0.tags = ["x"] }
        _ = try await h.supervisor.cancel(cancelled.id)
        #expect(await h.job(first.id)?.follows == nil)
        #expect(h.engine.log.contains("submit \(first.id)"))

        let deleted = try await h.create(url + "?2")
        let second = try await h.create(url + "?2") { $0.filename = "mine.iso" }
        try await h.supervisor.delete(deleted.id)
        #expect(h.engine.log.contains("submit \(second.id)"))

        let paused = try await h.create(url + "?3")
        let third = try await h.create(url + "?3") { $0.tags = ["y"] }
        _ = try await h.supervisor.pause(paused.id)
        #expect(h.engine.log.contains("submit \(third.id)"))
        await h.settle()
        #expect(await h.store.job(id: third.id)?.follows == nil, "stored")
    }

    @Test func aFollowerStoredWaitingComesBackFollowing() async throws {
        let store = MemoryJobStore()
        let before = SupervisorHarness(store: store)
        let leader = try await before.create(url)
        let follower = try await before.create(url) { $0.tags = ["t"] }
        await before.settle()
        #expect(await store.job(id: follower.id)?.follows == leader.id)
        let after = SupervisorHarness(store: store)
        try await after.supervisor.recover()
        #expect(after.engine.log == ["submit \(leader.id)"])
        after.engine.finishedFiles.insert("file.iso")
        await after.supervisor.apply(.finished(id: leader.id, JobSupervisorTests.file("file.iso")))
        #expect(await after.eventually { after.supervisor.peek(follower.id)?.0.state == .finished })
    }

    @Test func noFollowersWithDedupeOff() async throws {
        let h = SupervisorHarness()
        _ = try await h.create(url)
        let own = try await h.create(url) { $0.dedupe = false; $0.tags = ["z"] }
        #expect(own.follows == nil)
        #expect(h.engine.log.contains("submit \(own.id)"))
    }
}
