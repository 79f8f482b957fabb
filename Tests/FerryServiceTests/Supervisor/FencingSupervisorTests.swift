import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Synchronization
import Testing
@testable import FerryService

/// A monotonic clock that moves only when told to.
final class FakeMonotonicClock: Sendable {
    private let offset = Mutex(Duration.zero)
    private let base = ContinuousClock.now
    var now: ContinuousClock.Instant { base + offset.withLock { $0 } }
    func advance(_ by: Duration) { offset.withLock { $0 += by } }
}

/// The supervisor of one node of several when its leases lapse (`LeaseFence` on a fake clock, a lease of 3 s: fenced
/// 2 s after the last renewal was sent) and when it writes late for a job another node took since (`HeldEpochs`).
@Suite("Job supervisor, fencing")
struct FencingSupervisorTests {
    typealias Harness = ClusterSupervisorTests.Harness
    let lease = Duration.seconds(3)
    let clock = FakeMonotonicClock()

    private func makeFence() -> LeaseFence {
        let clock = self.clock
        return LeaseFence(lease: lease, now: { clock.now })
    }

    /// A running job of `harness`'s node, claimed and started under a fresh renewal.
    private func running(_ harness: Harness, fence: LeaseFence) async throws -> JobRecord {
        fence.renewed(sentAt: clock.now)
        let job = try await harness.create("http://example.org/a.bin")
        try await harness.claim()
        await harness.supervisor.apply(.started(id: job.id, offset: 0))
        #expect(await harness.supervisor.job(job.id)?.0.state == .downloading)
        return job
    }

    @Test func aNodeWhoseRenewalsLapseStopsItsJobsKeepingTheirBytesAndResumesThemWhenItHoldsThemAgain() async throws {
        let fence = makeFence()
        let harness = Harness(fence: fence)
        let job = try await running(harness, fence: fence)
        await harness.supervisor.enforceFence()
        #expect(!harness.engine.log.contains("pause \(job.id)"), "not before two thirds of the lease")

        clock.advance(.seconds(2))
        await harness.supervisor.enforceFence()
        #expect(harness.engine.log.contains("pause \(job.id)"))
        #expect(!harness.engine.log.contains("discard \(job.id)"), "its bytes stay")
        #expect(await harness.supervisor.ownedCount == 0)
        #expect(await harness.supervisor.job(job.id)?.0.state == .downloading, "its state is left as it was")
        // Its engine's last events change nothing, and the watcher alone does not lift the fence.
        await harness.supervisor.apply(.failed(id: job.id, JobFailure(code: .networkError, message: "stopped")))
        #expect(await harness.supervisor.job(job.id)?.0.state == .downloading)
        fence.renewed(sentAt: clock.now)
        await harness.supervisor.enforceFence()
        #expect(await harness.supervisor.ownedCount == 0)

        // A renewal that shows the node still holds it: the job runs again here.
        await harness.supervisor.enforceFence(renewed: [job.id])
        #expect(await harness.supervisor.ownedCount == 1)
        #expect(harness.engine.log.filter { $0 == "submit \(job.id)" }.count == 2)
    }

    @Test func aJobTakenOverWhileTheNodeWasFencedIsLeftToItsNewOwner() async throws {
        let fence = makeFence()
        let harness = Harness(fence: fence)
        let job = try await running(harness, fence: fence)
        clock.advance(.seconds(2))
        await harness.supervisor.enforceFence()
        await harness.store.expire(node: "node-a")
        _ = try await harness.store.claim(node: "node-b", limit: 1, lease: .seconds(3))
        fence.renewed(sentAt: clock.now)
        await harness.supervisor.enforceFence(renewed: [])
        #expect(await harness.supervisor.ownedCount == 0)
        #expect(harness.engine.log.filter { $0 == "submit \(job.id)" }.count == 1, "not run again here")
        #expect(harness.supervisor.peekNode(job.id) != "node-a")
    }

    @Test func anEngineEventFindingTheFenceDueFencesAtOnceAndIsNotApplied() async throws {
        // A process continued after a stop: its engine reports before the watcher looked.
        let fence = makeFence()
        let harness = Harness(fence: fence)
        let job = try await running(harness, fence: fence)
        clock.advance(.seconds(2))
        await harness.supervisor.apply(.finished(id: job.id, JobSupervisorTests.file("a.bin", size: 1_000)))
        #expect(await harness.supervisor.job(job.id)?.0.state == .downloading)
        #expect(harness.engine.log.contains("pause \(job.id)"))
        #expect(await harness.supervisor.ownedCount == 0)
    }

    @Test func aDeliveryTheTargetTookIsRecordedEvenWhenItsAnswerFindsTheFenceDue() async throws {
        let fence = makeFence()
        let harness = Harness(fence: fence)
        fence.renewed(sentAt: clock.now)
        let answers = try await harness.supervisor.create([SupervisorHarness.draft("http://example.org/a.iso") {
            $0.deliver = JobDraft.DeliverBody(url: "https://target.example/up", deleteAfter: false)
        }])
        guard case .created(let job) = answers.first else { throw HarnessError.notCreated("\(answers)") }
        try await harness.claim()
        await harness.supervisor.apply(.started(id: job.id, offset: 0))
        await harness.supervisor.apply(.finished(id: job.id, JobSupervisorTests.file("a.iso", size: 1_000)))
        harness.engine.finishedFiles.insert("a.iso")
        #expect(await harness.supervisor.job(job.id)?.0.state == .delivering)
        clock.advance(.seconds(2))
        // The target answered 2xx; the node learns it after its fence fell due (it was stopped meanwhile).
        await harness.supervisor.apply(.delivered(id: job.id, status: 201))
        #expect(await harness.supervisor.ownedCount == 0, "fenced")
        for _ in 0..<200 where await harness.store.memory.job(id: job.id)?.state != .finished {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(await harness.store.memory.job(id: job.id)?.state == .finished, "nobody took it: the store has it")
        // Shown once durable (a cluster commit's hooks run as it returns).
        for _ in 0..<200 where await harness.supervisor.job(job.id)?.0.state != .finished {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(await harness.supervisor.job(job.id)?.0.state == .finished)
    }

    @Test func aLateWriteForAJobAnotherNodeTookAndEndedSinceIsRefused() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        try await harness.claim()
        // This node stops past its lease; node-b takes the job over and finishes it, which releases it.
        await harness.store.expire(node: "node-a")
        let taken = try #require(try await harness.store.claim(node: "node-b", limit: 1, lease: .seconds(3)).first)
        var finished = taken.job
        finished.state = .finished
        _ = try await harness.store.commit(ClusterChange(updates: [finished], heldUnder: [job.id: taken.epoch]), node: "node-b")
        #expect(await harness.store.owners[job.id] == nil)
        // This node wakes up and writes: refused by its epoch, though nobody owns the job now.
        await harness.supervisor.apply(.started(id: job.id, offset: 0))
        for _ in 0..<200 where await harness.supervisor.ownedCount > 0 { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await harness.supervisor.ownedCount == 0)
        #expect(await harness.store.memory.job(id: job.id)?.state == .finished, "node-b's finish stands")
    }
}
