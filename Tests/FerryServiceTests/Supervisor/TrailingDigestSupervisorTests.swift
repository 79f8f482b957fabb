import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// Issue 26: a job nobody asked to verify is `finished` before its SHA-256 is known; the digest follows with a
/// `job` event (`TransferEvent.digested`), and whatever needs it waits for it: the `job.finished` notice, jobs
/// sharing the file. A restart in between computes it again.
@Suite("Supervisor: the digest after finished")
struct TrailingDigestSupervisorTests {
    static let url = "https://example.org/file.iso"
    static let digest = String(repeating: "d", count: 64)

    static func file(_ name: String, size: Int64 = 10) -> FinishedFile {
        var file = JobSupervisorTests.file(name, size: size)
        file.sha256 = nil
        return file
    }

    @Test func finishedComesFirstAndTheDigestFollowsWithItsEventAndNotice() async throws {
        let h = SupervisorHarness(webhookURL: "https://hooks.example/all")
        let job = try await h.create(Self.url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.supervisor.apply(.finished(id: job.id, Self.file("file.iso")))
        let finished = try #require(await h.job(job.id))
        #expect(finished.state == .finished && finished.sha256 == nil)
        #expect(await h.store.pendingNotices(limit: 10).isEmpty, "job.finished waits for the digest")
        #expect(h.published.jobEvents(job.id).last?["sha256"] is NSNull)

        await h.supervisor.apply(.digested(id: job.id, sha256: Self.digest))
        let digested = try #require(await h.job(job.id))
        #expect(digested.state == .finished && digested.sha256 == Self.digest)
        #expect(await h.store.job(id: job.id)?.sha256 == Self.digest, "stored")
        let last = try #require(h.published.jobEvents(job.id).last)
        #expect(last["state"] as? String == "finished" && last["sha256"] as? String == Self.digest)
        let notices = await h.store.pendingNotices(limit: 10)
        #expect(notices.map(\.type) == ["job.finished"])
        let notice = try #require(notices.first)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(notice.body)) as? [String: Any])
        #expect((body["data"] as? [String: Any])?["sha256"] as? String == Self.digest)

        // A second digest changes nothing.
        let events = h.published.jobEvents(job.id).count
        await h.supervisor.apply(.digested(id: job.id, sha256: String(repeating: "e", count: 64)))
        await h.settle()
        #expect(h.published.jobEvents(job.id).count == events)
        #expect(await h.job(job.id)?.sha256 == Self.digest)
    }

    /// A job asking a checksum the leader's finished file must be checked against waits for the digest, then
    /// shares the file.
    @Test func aFollowerWaitsForItsLeadersDigest() async throws {
        let h = SupervisorHarness()
        let leader = try await h.create(Self.url)
        await h.supervisor.apply(.started(id: leader.id, offset: 0))
        await h.supervisor.apply(.finished(id: leader.id, Self.file("file.iso")))
        h.engine.finishedFiles.insert("file.iso")
        await h.settle()
        let follower = try await h.create(Self.url) { $0.sha256 = Self.digest }
        #expect(follower.follows == leader.id && follower.state == .waiting)
        await h.settle()
        #expect(!h.engine.log.contains { $0.hasPrefix("share \(follower.id)") || $0 == "submit \(follower.id)" })

        await h.supervisor.apply(.digested(id: leader.id, sha256: Self.digest))
        #expect(await h.eventually { h.engine.log.contains("share \(follower.id) file.iso") })
        #expect(!h.engine.log.contains("submit \(follower.id)"), "no second download")
        await h.settle()
        #expect(await h.eventually { h.published.jobEvents(follower.id).last?["state"] as? String == "finished" })
        #expect(await h.job(follower.id)?.sha256 == Self.digest)
    }

    /// Stopped between `finished` and the digest: start-up has the engine compute it, and the notice goes then.
    @Test func aRestartInBetweenComputesTheDigest() async throws {
        let store = MemoryJobStore()
        let first = SupervisorHarness(store: store)
        let job = try await first.create(Self.url)
        let adopted = try await first.create(Self.url + "?a")
        let verified = try await first.create(Self.url + "?v")
        await first.supervisor.apply(.finished(id: job.id, Self.file("file.iso")))
        await first.supervisor.apply(.finished(id: verified.id, JobSupervisorTests.file("v.iso")))
        await first.settle()
        #expect(await store.job(id: job.id)?.sha256 == nil)

        let engine = FakeEngine()
        engine.recovered = [adopted.id: .finished(FinishRecord(filename: "a.iso", size: 9, sha256: nil))]
        let second = SupervisorHarness(engine: engine, store: store, webhookURL: "https://hooks.example/all")
        try await second.supervisor.recover()
        #expect(Set(engine.log.filter { $0.hasPrefix("digest ") }) == ["digest \(job.id) file.iso", "digest \(adopted.id) a.iso"])
        #expect(await second.job(adopted.id)?.state == .finished)
        await second.settle()
        #expect(await store.pendingNotices(limit: 10).isEmpty, "no job.finished without the digest")

        await second.supervisor.apply(.digested(id: adopted.id, sha256: Self.digest))
        #expect(await second.job(adopted.id)?.sha256 == Self.digest)
        #expect(await store.job(id: adopted.id)?.sha256 == Self.digest)
        #expect(await store.pendingNotices(limit: 10).map(\.jobID) == [adopted.id])
    }

    /// A job with a delivery is handed to the engine asking for its digest before `finished` (the delivery reads it).
    @Test func aJobWithADeliveryAsksForItsDigestFirst() async throws {
        let h = SupervisorHarness()
        let plain = try await h.create(Self.url)
        let delivered = try await h.create(Self.url + "?d") { $0.deliver = JobDraft.DeliverBody(url: "https://target.example/up") }
        let url = try SubmittedURL.parse(Self.url)
        #expect(await h.supervisor.spec(for: plain, url: url).digestBeforeFinish == false)
        #expect(await h.supervisor.spec(for: delivered, url: url).digestBeforeFinish == true)
    }
}
