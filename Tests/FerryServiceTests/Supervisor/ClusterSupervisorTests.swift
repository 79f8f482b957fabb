import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging
import Testing
@testable import FerryService

/// A supervisor as one node ("node-a") of several, over a `FakeClusterStore` and a fake engine: what reaches the
/// engine (only claimed or acquired jobs), what a lost lease or a refused commit stops, and where actions are made.
@Suite("Job supervisor, one node of several")
struct ClusterSupervisorTests {
    struct Harness {
        let supervisor: JobSupervisor
        let engine = FakeEngine()
        let store = FakeClusterStore()
        let hub: EventHub
        let wants = Counter()

        /// - Parameter fence: the node's `LeaseFence`; nil: it always holds its leases.
        init(forwardTimeout: Duration = .milliseconds(300), fence: LeaseFence? = nil) {
            let logger = Logger(label: "test")
            let ids = EventIDAllocator(startingAfter: 0, block: ClusterEventID.block)
            let hub = EventHub(ids: ids, logger: logger, heartbeat: 0)
            let feed = ClusterEventFeed(store: store, hub: hub, ids: ids, after: 0, logger: logger)
            let (refusals, refused) = AsyncStream<[String: String]>.makeStream()
            let relay = ProgressRelay(store: store, node: "node-a", logger: logger)
            let held = HeldEpochs()
            let commits = CommitPipeline(store: store, cluster: .init(store: store, node: "node-a", feed: feed, relay: relay,
                                                                      refused: { refused.yield($0) }, held: held),
                                         logger: logger, publish: { _ in })
            var dependencies = JobSupervisor.Dependencies(
                store: store, engine: engine, files: engine, ids: EventIDAllocator(startingAfter: 0), commits: commits,
                metrics: ServiceMetrics(), logger: logger, table: JobTable())
            let wants = self.wants
            dependencies.role = NodeRole(store: store, node: "node-a", lease: .seconds(3), wantsWork: { wants.add() },
                                         forwardTimeout: forwardTimeout, fence: fence, held: held)
            dependencies.publishedMark = { ids.lastAllocated }
            let supervisor = JobSupervisor(dependencies)
            self.supervisor = supervisor
            self.hub = hub
            Task { for await owners in refusals { await supervisor.refused(owners) } }
        }

        func create(_ url: String) async throws -> JobRecord {
            let answers = try await supervisor.create([SupervisorHarness.draft(url)])
            guard case .created(let job) = answers.first else { throw HarnessError.notCreated("\(answers)") }
            return job
        }

        /// Claims as `LeaseKeeper` does and hands the jobs over.
        func claim(_ limit: Int = 4) async throws {
            await supervisor.run(claimed: try await store.claim(node: "node-a", limit: limit, lease: .seconds(3)))
        }
    }

    @Test func aCreatedJobWaitsForAClaimAndOnlyClaimedJobsReachTheEngine() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        #expect(!harness.engine.log.contains("submit \(job.id)"), "not submitted before a claim")
        #expect(harness.wants.value == 1, "a claim was asked for")
        try await harness.claim()
        #expect(harness.engine.log.contains("submit \(job.id)"))
        #expect(await harness.supervisor.ownedCount == 1)
        #expect(harness.supervisor.peekNode(job.id) == "node-a")
        // Events of a job this node does not own are not its to apply.
        let other = try await harness.create("http://example.org/b.bin")
        await harness.supervisor.apply(.started(id: other.id, offset: 0))
        #expect(await harness.supervisor.job(other.id)?.0.state == .waiting)
    }

    @Test func aPauseMadeBetweenAClaimAndItsRunIsNotTakenBack() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        // The keeper's claim statement has read the row (this node now owns it in the store); a pause reaches the
        // supervisor before the claim does: it acquires the job and pauses it.
        let claimed = try await harness.store.claim(node: "node-a", limit: 4, lease: .seconds(3))
        #expect(claimed.map(\.job.id) == [job.id])
        let paused = try await harness.supervisor.pause(job.id)
        #expect(paused.state == .paused)
        await harness.supervisor.run(claimed: claimed)
        #expect(!harness.engine.log.contains("submit \(job.id)"), "the claim's older row is not run: \(harness.engine.log)")
        #expect(await harness.supervisor.job(job.id)?.0.state == .paused)
        #expect(await harness.supervisor.ownedCount == 0)
    }

    @Test func aJobResumedHereBetweenAClaimAndItsRunRunsOnce() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        let claimed = try await harness.store.claim(node: "node-a", limit: 4, lease: .seconds(3))
        _ = try await harness.supervisor.pause(job.id)
        let resumed = try await harness.supervisor.resume(job.id)
        #expect(resumed.state.needsRunning)
        await harness.supervisor.run(claimed: claimed)
        #expect(harness.engine.log.filter { $0 == "submit \(job.id)" }.count == 1, "\(harness.engine.log)")
        #expect(await harness.supervisor.ownedCount == 1)
    }

    @Test func aJobRenewLeavesOutIsStoppedWithoutTouchingItsFilesOrState() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        try await harness.claim()
        await harness.supervisor.apply(.started(id: job.id, offset: 0))
        let mark = await harness.supervisor.ownershipMark
        // Another node took it over after this node's lease ran out.
        await harness.store.expire(node: "node-a")
        await harness.store.own(job.id, by: "node-b")
        await harness.supervisor.keepOnly(try await harness.store.renew(node: "node-a", lease: .seconds(3)), ownedBefore: mark)
        #expect(harness.engine.log.contains("pause \(job.id)"))
        #expect(!harness.engine.log.contains("discard \(job.id)"), "its files stay")
        #expect(await harness.supervisor.ownedCount == 0)
        // Its late engine events change nothing.
        await harness.supervisor.apply(.failed(id: job.id, JobFailure(code: .networkError, message: "gone")))
        #expect(await harness.supervisor.job(job.id)?.0.state != .failed)
    }

    @Test func aJobTakenAfterTheRenewalStartedIsKept() async throws {
        let harness = Harness()
        _ = try await harness.create("http://example.org/a.bin")
        let mark = await harness.supervisor.ownershipMark
        try await harness.claim()
        // The renewal answered before the claim: the job is not in it, yet it is this node's.
        await harness.supervisor.keepOnly([], ownedBefore: mark)
        #expect(await harness.supervisor.ownedCount == 1)
    }

    @Test func aRefusedCommitStopsTheJob() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        try await harness.claim()
        await harness.store.own(job.id, by: "node-b")
        await harness.supervisor.apply(.started(id: job.id, offset: 0))
        for _ in 0..<200 where await harness.supervisor.ownedCount > 0 { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(await harness.supervisor.ownedCount == 0)
        #expect(harness.engine.log.contains("pause \(job.id)"))
        #expect(await harness.store.memory.job(id: job.id)?.state == .waiting, "the refused change was not stored")
    }

    @Test func actionsOnAnUnownedJobAreMadeHereAndOnAnOwnedOneForwarded() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        // Nobody runs it: paused here, and no longer this node's.
        let paused = try await harness.supervisor.pause(job.id)
        #expect(paused.state == .paused)
        #expect(await harness.supervisor.ownedCount == 0)
        #expect(await harness.store.owners[job.id] == nil)
        // Resumed here: it runs here.
        _ = try await harness.supervisor.resume(job.id)
        #expect(harness.engine.log.contains("submit \(job.id)"))
        #expect(await harness.supervisor.ownedCount == 1)

        let other = try await harness.create("http://example.org/b.bin")
        await harness.store.own(other.id, by: "node-b")
        // node-b never shows the change: the answer is `ownerSilent` after the timeout, and the command was sent.
        await #expect(throws: JobsError.ownerSilent(node: "node-b")) { try await harness.supervisor.cancel(other.id) }
        #expect(await harness.store.sent.map { "\($0.node) \($0.command)" } == ["node-b cancel \(other.id)\nnode-a"])
        #expect(!harness.engine.log.contains("cancel \(other.id)"))
        // A PATCH of it is forwarded too, its fields as JSON.
        await #expect(throws: JobsError.ownerSilent(node: "node-b")) {
            try await harness.supervisor.update(other.id, JobPatch(priority: 5, tags: ["a b"]))
        }
        #expect(await harness.store.sent.last.map { "\($0.node) \($0.command)" }
                == #"node-b patch \#(other.id) {"priority":5,"tags":["a b"]}"# + "\nnode-a")
    }

    @Test func anOwnerRefusingAForwardedActionIsAnsweredAsItsRefusalNotAfterTheTimeout() async throws {
        let harness = Harness(forwardTimeout: .seconds(30))
        let other = try await harness.create("http://example.org/b.bin")
        await harness.store.own(other.id, by: "node-b")
        // node-b finished the job meanwhile and refuses the pause; this node answers with node-b's 409 at once.
        let started = ContinuousClock.now
        let supervisor = harness.supervisor, id = other.id
        let paused = Task { try await supervisor.pause(id) }
        while await harness.store.sent.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        await harness.supervisor.perform("refused \(other.id) pause conflict a finished job cannot be paused")
        await #expect(throws: JobsError.notApplicable("a finished job cannot be paused")) { try await paused.value }
        #expect(ContinuousClock.now - started < .seconds(20), "answered with the refusal, not after the forward timeout")
    }

    @Test func aForwardedActionThatCannotBeMadeHereIsRefusedToTheAskingNode() async throws {
        let harness = Harness()
        let job = try await harness.create("http://example.org/a.bin")
        _ = try await harness.supervisor.cancel(job.id)
        // node-b asked to pause it: this node cannot (it is cancelled) and tells node-b why.
        await harness.supervisor.perform("pause \(job.id)\nnode-b")
        #expect(await harness.store.sent.map { "\($0.node) \($0.command)" }
                == ["node-b refused \(job.id) pause conflict a cancelled job cannot be paused"])
        await harness.supervisor.perform("resume missing-job\nnode-b")
        #expect(await harness.store.sent.last.map { "\($0.node) \($0.command)" }
                == "node-b refused missing-job resume notFound no job with id 'missing-job'")
    }

    @Test func aPatchThatCannotApplyIsRefusedWithoutForwarding() async throws {
        let harness = Harness()
        let other = try await harness.create("http://example.org/b.bin")
        await harness.store.own(other.id, by: "node-b")
        // node-b cancelled it; this node has read the row.
        var cancelled = try #require(await harness.store.memory.job(id: other.id))
        cancelled.state = .cancelled
        try await harness.store.memory.update(cancelled)
        await harness.supervisor.refresh([other.id])
        await #expect(throws: JobsError.notApplicable("a cancelled job cannot be changed")) {
            try await harness.supervisor.update(other.id, JobPatch(priority: 5))
        }
        // A URL too long for a notification is refused, naming the node.
        var long = JobPatch()
        long.url = try SubmittedURL.parse("http://example.org/" + String(repeating: "x", count: 8_000))
        let running = try await harness.create("http://example.org/c.bin")
        await harness.store.own(running.id, by: "node-b")
        let bytes = ForwardedAction.patch(long).command(running.id, asker: "node-a").utf8.count
        #expect(bytes > 8_000)
        await #expect(throws: JobsError.tooLargeToForward(node: "node-b", bytes: bytes)) {
            try await harness.supervisor.update(running.id, long)
        }
        #expect(await harness.store.sent.isEmpty)
    }

    @Test func progressOfJobsRunningElsewhereUpdatesTheTable() async throws {
        let harness = Harness()
        let other = try await harness.create("http://example.org/b.bin")
        await harness.store.own(other.id, by: "node-b")
        var running = try #require(await harness.store.memory.job(id: other.id))
        running.state = .downloading
        try await harness.store.memory.update(running)
        await harness.supervisor.refresh([other.id])
        let data = Array(#"{"id":"\#(other.id)","phase":"downloading","bytesReceived":500,"bytesExpected":1000,"progress":0.5,"speed":250,"eta":2}"#.utf8)
        let unknown = Array(#"{"id":"nope","phase":"downloading","bytesReceived":5,"bytesExpected":null,"progress":null,"speed":1,"eta":null}"#.utf8)
        let events = await harness.supervisor.absorbProgress([data, unknown, Array("not json".utf8)])
        #expect(events.map(\.data) == [data])
        let (job, rates) = try #require(await harness.supervisor.job(other.id))
        #expect(job.bytesReceived == 500 && job.bytesExpected == 1000)
        #expect(rates == LiveRates(speed: 250, eta: 2))
        // A progress of a job no longer running (its last job event came first) is dropped.
        running.state = .paused
        try await harness.store.memory.update(running)
        await harness.supervisor.refresh([other.id])
        #expect(await harness.supervisor.absorbProgress([data]).isEmpty)
        #expect(await harness.supervisor.job(other.id)?.1 == nil)
    }

    /// Names are unique only per node: a job taken over while it was delivering is delivered from this node's file of
    /// its name only when that file is the job's (its SHA-256); another job's file of that name is never sent, and
    /// the job is downloaded again instead.
    @Test(arguments: [false, true])
    func aDeliveryTakenOverSendsTheFileOfItsNameOnlyWhenItIsTheJobs(fileIsTheJobs: Bool) async throws {
        let harness = Harness()
        let answers = try await harness.supervisor.create([SupervisorHarness.draft("http://example.org/a.iso") {
            $0.deliver = JobDraft.DeliverBody(url: "https://target.example/up", deleteAfter: false)
        }])
        guard case .created(let job) = answers.first else { throw HarnessError.notCreated("\(answers)") }
        // Node b downloaded it and was delivering it when its lease ran out.
        let taken = try #require(try await harness.store.claim(node: "node-b", limit: 1, lease: .seconds(3)).first)
        var delivering = taken.job
        delivering.state = .delivering
        delivering.filename = "a.iso"
        delivering.bytesReceived = 1_000
        delivering.bytesExpected = 1_000
        delivering.sha256 = String(repeating: "ab", count: 32)
        _ = try await harness.store.commit(ClusterChange(updates: [delivering], heldUnder: [job.id: taken.epoch]), node: "node-b")
        await harness.store.expire(node: "node-b")
        // This node has a file of that name: the job's own copy, or another job's.
        harness.engine.finishedFiles.insert("a.iso")
        harness.engine.finishedDigests["a.iso"] = fileIsTheJobs ? delivering.sha256 : String(repeating: "cd", count: 32)

        try await harness.claim()
        let outcome = fileIsTheJobs ? "deliver \(job.id)" : "submit \(job.id)"
        for _ in 0..<200 where !harness.engine.log.contains(outcome) { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(harness.engine.log.contains("holds a.iso"), "the file was checked")
        #expect(harness.engine.log.contains(outcome))
        #expect(harness.engine.log.contains("deliver \(job.id)") == fileIsTheJobs, "another job's file is never sent")
        if !fileIsTheJobs {
            #expect(await harness.supervisor.job(job.id)?.0.state == .waiting, "downloaded again before its delivery")
        }
    }
}

/// Counts calls from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
