import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// The supervisor's state rules on their own: a memory store, a fake engine, a fixed clock; no sockets, no disk.
@Suite("Job supervisor, alone")
struct JobSupervisorTests {
    let url = "http://example.org/file.iso"

    @Test func createQueuesTheTransferOrKeepsItPaused() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        #expect(job.state == .waiting)
        let paused = try await h.create(url + "?b") { $0.paused = true }
        #expect(paused.state == .paused)
        #expect(h.engine.log == ["submit \(job.id)"])
        #expect(await h.store.job(id: job.id)?.state == .waiting, "answered only once durable")
    }

    @Test func dedupeAnswersTheLiveJobButNotAFinishedOneWhoseFileIsGone() async throws {
        let h = SupervisorHarness()
        let first = try await h.create(url)
        let again = try await h.supervisor.create([SupervisorHarness.draft(url)])
        guard case .existing(let existing) = again.first else { Issue.record("not deduplicated: \(again)"); return }
        #expect(existing.id == first.id)
        await h.supervisor.apply(.finished(id: first.id, Self.file("file.iso")))
        // The file is not in the fake's files/: a new job is created.
        let third = try await h.supervisor.create([SupervisorHarness.draft(url)])
        guard case .created = third.first else { Issue.record("a job without its file was reused: \(third)"); return }
        h.engine.finishedFiles.insert("file.iso")
        let fourth = try await h.supervisor.create([SupervisorHarness.draft(url)])
        guard case .existing = fourth.first else { Issue.record("a finished job with its file was not reused"); return }
    }

    /// A new URL given with PATCH is keyed for dedupe as a new job's is: `--cache-key-ignore`'s parameters left out.
    @Test func aPatchedURLIsKeyedWithTheCacheKeyRule() async throws {
        let rule = CacheKeyRule(ignoring: ["token"])
        let h = SupervisorHarness(keyRule: rule)
        let job = try await h.create("http://example.org/other.iso") { $0.paused = true }
        let patched = try await h.supervisor.update(job.id, JobPatch(url: try SubmittedURL.parse(url + "?token=2")))
        #expect(patched.dedupeKey == rule.key(for: try SubmittedURL.parse(url + "?token=1")))
        #expect(patched.dedupeKey == url, "\(patched.dedupeKey)")
    }

    @Test func engineEventsDriveTheJob() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        #expect(await h.job(job.id)?.state == .downloading)
        await h.supervisor.apply(.responded(id: job.id, TransferMetadata(
            finalURL: url, filename: "file.iso", contentType: "application/x-iso9660-image", bytesExpected: 1_000,
            etag: "\"e\"", lastModified: nil, offset: 0)))
        await h.supervisor.apply(.progress(id: job.id, TransferProgress(bytesReceived: 400, bytesExpected: 1_000, bytesPerSecond: 100, eta: 6)))
        #expect(await h.job(job.id)?.bytesReceived == 400)
        await h.supervisor.apply(.finished(id: job.id, Self.file("file.iso", size: 1_000)))
        let finished = try #require(await h.job(job.id))
        #expect(finished.state == .finished && finished.sha256 == String(repeating: "a", count: 64) && finished.bytesReceived == 1_000)
        #expect(finished.finishedAt == Date(timeIntervalSince1970: 1_800_000_000))
        await h.settle()
        #expect(await h.eventually { h.engine.log.contains("finishRecorded \(job.id)") }, "the finish record goes once the store knows")
        let states = h.published.jobEvents(job.id).compactMap { $0["state"] as? String }
        #expect(states == ["waiting", "downloading", "downloading", "finished"])
    }

    @Test func failuresAndWaitsCarryTheirCodes() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        h.engine.partialBytes[job.id] = 300
        let failure = JobFailure(code: .httpError, message: "the origin answered 503", httpStatus: 503)
        await h.supervisor.apply(.waiting(id: job.id, reason: .retrying(at: Date(timeIntervalSince1970: 1_800_000_010), attempt: 1, failure: failure)))
        let waiting = try #require(await h.job(job.id))
        #expect(waiting.state == .waiting && waiting.error?.code == .retrying && waiting.error?.httpStatus == 503)
        #expect(waiting.bytesReceived == 300, "bytes on disk are the truth while waiting")
        await h.supervisor.apply(.failed(id: job.id, JobFailure(code: .httpError, message: "the origin answered 404", httpStatus: 404)))
        let failed = try #require(await h.job(job.id))
        #expect(failed.state == .failed && failed.error?.code == .httpError && failed.error?.httpStatus == 404)
    }

    @Test func pauseAnswersWithTheBytesTheWriterFlushed() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.supervisor.apply(.progress(id: job.id, TransferProgress(bytesReceived: 409_338, bytesExpected: nil, bytesPerSecond: 1, eta: nil)))
        h.engine.pausesAnswerAtOnce = false
        async let answer = h.supervisor.pause(job.id)
        try await Task.sleep(nanoseconds: 20_000_000)
        // Progress that raced the pause does not count: the job is paused already.
        await h.supervisor.apply(.progress(id: job.id, TransferProgress(bytesReceived: 420_000, bytesExpected: nil, bytesPerSecond: 1, eta: nil)))
        await h.supervisor.apply(.paused(id: job.id, bytesOnDisk: 458_752))
        h.engine.completePause(job.id, bytes: 458_752)
        let paused = try await answer
        #expect(paused.state == .paused && paused.bytesReceived == 458_752)
        await h.settle()
        let events = h.published.jobEvents(job.id).filter { $0["state"] as? String == "paused" }
        #expect(events.count == 1 && events.first?["bytesReceived"] as? Int == 458_752)
    }

    /// A job that finishes while its pause waits for the engine answers the pause with 409, as a finished job does
    /// (the seam suite saw `200` with state `finished`).
    @Test func aPauseOvertakenByTheFinishIsAConflict() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        h.engine.pausesAnswerAtOnce = false
        async let answer = h.supervisor.pause(job.id)
        #expect(await h.eventually { h.engine.log.contains("pause \(job.id)") })
        await h.supervisor.apply(.finished(id: job.id, Self.file("done.iso")))
        h.engine.completePause(job.id, bytes: 10)
        do {
            let paused = try await answer
            Issue.record("the pause answered \(paused.state) instead of a conflict")
        } catch {
            #expect(error as? JobsError == .notApplicable(JobAction.pause.conflictMessage(.finished)))
        }
        #expect(await h.job(job.id)?.state == .finished)
    }

    /// The `409` of a pause overtaken by the finish comes once the finish is durable and shown: before, a reader saw
    /// the job `paused` (the pause's own, never published, state) after the answer, and an event then say `finished`
    /// (the seam suite's replay check, seed 736959745 in CI).
    @Test func aPauseOvertakenByAFinishNotYetDurableAnswersOnceTheFinishIsShown() async throws {
        let gate = PublishGate()
        let h = SupervisorHarness(beforePublish: { _ in await gate.pass() })
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.settle()
        h.engine.pausesAnswerAtOnce = false
        let answered = PublishGate()
        answered.close()
        let pause = Task {
            defer { answered.open() }
            return try await h.supervisor.pause(job.id)
        }
        #expect(await h.eventually { h.engine.log.contains("pause \(job.id)") })
        gate.close()
        await h.supervisor.apply(.finished(id: job.id, Self.file("raced.iso")))
        h.engine.completePause(job.id, bytes: 10)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(answered.isClosed, "the pause answered while the finish was not yet shown")
        gate.open()
        do {
            let paused = try await pause.value
            Issue.record("the pause answered \(paused.state) instead of a conflict")
        } catch {
            #expect(error as? JobsError == .notApplicable(JobAction.pause.conflictMessage(.finished)))
        }
        #expect(await h.supervisor.job(job.id)?.0.state == .finished, "the answer came before readers saw the finish")
    }

    /// A pause the engine answers with no transfer left (it just ended) waits for that end's event, still on its way
    /// from the engine, and answers as a finished job does (409); before, it answered `200 paused` and the job then
    /// turned `finished` by itself (the seam suite saw the answer's body say `finished`, then the job `paused`).
    @Test func aPauseOfATransferThatJustEndedWaitsForItsEndOnItsWay() async throws {
        let inFlight = InFlightEvents()
        let h = SupervisorHarness(eventsApplied: { await inFlight.applyAll() })
        await inFlight.set(h.supervisor)
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        h.engine.pausesAnswerAtOnce = false
        async let answer = h.supervisor.pause(job.id)
        #expect(await h.eventually { h.engine.log.contains("pause \(job.id)") })
        // The transfer finished before the pause reached the engine: its event waits in the mailbox.
        await inFlight.hold(.finished(id: job.id, Self.file("ended.iso")))
        h.engine.completePause(job.id, bytes: nil)
        do {
            let paused = try await answer
            Issue.record("the pause answered \(paused.state) before the transfer's end was applied")
        } catch {
            #expect(error as? JobsError == .notApplicable(JobAction.pause.conflictMessage(.finished)))
        }
        #expect(await h.job(job.id)?.state == .finished)
    }

    /// A job with a delivery paused while its last bytes came in stays paused with its file (pause is allowed while
    /// delivering), and resume delivers it; the seam suite saw the pause answer `200` with the job `delivering`.
    @Test func aPauseOvertakenByTheDownloadOfAJobWithADeliveryStandsAndResumeDelivers() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url) { $0.deliver = JobDraft.DeliverBody(url: "https://target.example/up", deleteAfter: false) }
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        h.engine.pausesAnswerAtOnce = false
        async let answer = h.supervisor.pause(job.id)
        #expect(await h.eventually { h.engine.log.contains("pause \(job.id)") })
        await h.supervisor.apply(.finished(id: job.id, Self.file("kept.iso")))
        h.engine.completePause(job.id, bytes: nil)
        let paused = try await answer
        #expect(paused.state == .paused && paused.sha256 != nil && paused.filename == "kept.iso")
        #expect(!h.engine.log.contains("deliver \(job.id)"))
        h.engine.finishedFiles.insert("kept.iso")
        let resumed = try await h.supervisor.resume(job.id)
        #expect(resumed.state == .delivering)
        #expect(h.engine.log.contains("deliver \(job.id)"))
    }

    /// Readers are told of a job's end only once the store has it (the seam suite saw a delivered job PUT again after a
    /// kill -9: `finished` was shown before it was durable). The publish gate stands in for a slow disk.
    @Test func aFinishIsShownOnlyOnceItIsDurable() async throws {
        let gate = PublishGate()
        let h = SupervisorHarness(beforePublish: { _ in await gate.pass() })
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.settle()
        let before = await h.supervisor.list(states: nil, after: nil, limit: 10).eventID
        gate.close()
        await h.supervisor.apply(.finished(id: job.id, Self.file("held.iso")))
        #expect(await h.supervisor.job(job.id)?.0.state == .downloading)
        let listed = await h.supervisor.list(states: [.finished], after: nil, limit: 10)
        #expect(listed.jobs.isEmpty)
        // The list's event id stops before the finish's event (allocated already), so that a stream resumed from it
        // gets that event: the CLI's `--wait` missed it and waited for good.
        #expect(listed.eventID == before)
        #expect(await h.supervisor.snapshot(job.id)?.job.state == .downloading)
        gate.open()
        await h.settle()
        #expect(await h.job(job.id)?.state == .finished)
        let after = await h.supervisor.list(states: [.finished], after: nil, limit: 10)
        #expect(after.jobs.count == 1 && after.eventID > before)
    }

    /// An action on a job whose end is not yet shown waits for it, and is decided on the state then shown: a cancel
    /// of a job still shown `downloading` answers the `409` of a finished job only once a reader sees `finished`.
    @Test func anActionOnAJobWhoseEndIsHeldBackWaitsForIt() async throws {
        let gate = PublishGate()
        let h = SupervisorHarness(beforePublish: { _ in await gate.pass() })
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.settle()
        gate.close()
        await h.supervisor.apply(.finished(id: job.id, Self.file("held2.iso")))
        let answered = PublishGate()
        answered.close()
        let cancelled = Task {
            defer { answered.open() }
            return try await h.supervisor.cancel(job.id)
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(answered.isClosed, "the cancel answered while the job was still shown downloading")
        #expect(await h.supervisor.job(job.id)?.0.state == .downloading)
        gate.open()
        do {
            _ = try await cancelled.value
            Issue.record("cancelling a finished job succeeded")
        } catch {
            #expect(error as? JobsError == .notApplicable(JobAction.cancel.conflictMessage(.finished)))
        }
        #expect(await h.supervisor.job(job.id)?.0.state == .finished)
    }

    @Test func actionsFollowTheStateTable() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        _ = try await h.supervisor.pause(job.id)
        let again = try await h.supervisor.pause(job.id)
        #expect(again.state == .paused)
        #expect(h.engine.log.filter { $0.hasPrefix("pause") }.count == 1, "pausing a paused job is a no-op")
        let resumed = try await h.supervisor.resume(job.id)
        #expect(resumed.state == .waiting && h.engine.log.last == "submit \(job.id)")
        let cancelled = try await h.supervisor.cancel(job.id)
        #expect(cancelled.state == .cancelled && cancelled.bytesReceived == 0 && h.engine.log.last == "cancel \(job.id)")
        _ = try await h.supervisor.cancel(job.id)
        #expect(h.engine.log.filter { $0.hasPrefix("cancel") }.count == 1, "cancelling a cancelled job is a no-op")
        await #expect(throws: (any Error).self) { try await h.supervisor.resume(job.id) }
        await #expect(throws: (any Error).self) { try await h.supervisor.pause(job.id) }
        await #expect(throws: (any Error).self) { try await h.supervisor.pause("no-such-job") }
    }

    @Test func deleteDiscardsTheJobAndItsFile() async throws {
        let h = SupervisorHarness()
        let job = try await h.create(url)
        await h.supervisor.apply(.finished(id: job.id, Self.file("file.iso")))
        h.engine.finishedFiles.insert("file.iso")
        try await h.supervisor.delete(job.id)
        #expect(h.engine.log.contains("discard \(job.id)"))
        #expect(!h.engine.hasFinishedFile(named: "file.iso"))
        #expect(await h.job(job.id) == nil)
        await h.settle()
        #expect(h.published.all.last?.kind == .removed)
        #expect(await h.store.job(id: job.id) == nil)
    }

    @Test func recoveryResumesInterruptedJobsAndAdoptsWhatFinished() async throws {
        let store = MemoryJobStore()
        let first = SupervisorHarness(store: store)
        let running = try await first.create(url)
        let paused = try await first.create(url + "?p") { $0.paused = true }
        let finishing = try await first.create(url + "?f")
        let engine = FakeEngine()
        engine.recovered = [
            running.id: .partial(bytes: 700),
            paused.id: .partial(bytes: 50),
            finishing.id: .finished(FinishRecord(filename: "f.iso", size: 900, sha256: String(repeating: "b", count: 64))),
        ]
        let second = SupervisorHarness(engine: engine, store: store)
        try await second.supervisor.recover()
        let resumed = try #require(await second.job(running.id))
        #expect(resumed.state == .waiting && resumed.bytesReceived == 700)
        let stillPaused = try #require(await second.job(paused.id))
        #expect(stillPaused.state == .paused && stillPaused.bytesReceived == 50)
        let adopted = try #require(await second.job(finishing.id))
        #expect(adopted.state == .finished && adopted.filename == "f.iso" && adopted.bytesReceived == 900)
        #expect(engine.log == ["submit \(running.id)"], "only the interrupted job goes back to the engine")
        #expect(await store.job(id: finishing.id)?.state == .finished, "what recovery learned is saved")
    }

    /// Found by the seam suite: a kill -9 right after a download with a `deliver` moved its file into place, before
    /// the store heard of it, left the job `finished` with its delivery pending and nothing uploaded.
    @Test func recoveryDeliversAFileFinishedJustBeforeAStopBeforeFinishing() async throws {
        let store = MemoryJobStore()
        let first = SupervisorHarness(store: store)
        let job = try await first.create(url) { $0.deliver = JobDraft.DeliverBody(url: "https://target.example/up") }
        let engine = FakeEngine()
        engine.recovered = [job.id: .finished(FinishRecord(filename: "f.iso", size: 900, sha256: String(repeating: "b", count: 64)))]
        let second = SupervisorHarness(engine: engine, store: store)
        try await second.supervisor.recover()
        let adopted = try #require(await second.job(job.id))
        #expect(adopted.state == .delivering && adopted.filename == "f.iso" && adopted.sha256 != nil)
        #expect(adopted.delivery?.state == .pending)
        #expect(engine.log.contains("deliver \(job.id)"), "\(engine.log)")
        #expect(await store.job(id: job.id)?.state == .delivering)
    }

    @Test func aFullSpoolRefusesNewJobsAtSubmit() async throws {
        let h = SupervisorHarness(quota: 1_000)
        let job = try await h.create(url)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.supervisor.apply(.finished(id: job.id, Self.file("file.iso", size: 1_000)))
        let answers = try await h.supervisor.create([SupervisorHarness.draft(url + "?2")])
        guard case .refused = answers.first else { Issue.record("not refused: \(answers)"); return }
    }

    static func file(_ name: String, size: Int64 = 10) -> FinishedFile {
        FinishedFile(filename: name, path: "/nowhere/" + name, size: size, sha256: String(repeating: "a", count: 64),
                     contentType: nil, finalURL: "http://example.org/" + name, etag: nil, lastModified: nil)
    }
}

/// Holds the commit pipeline's publishing while closed (the store has written, the pipeline not yet finished with it).
final class PublishGate: @unchecked Sendable {
    private let lock = NSLock()
    private var closed = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func close() { lock.withLock { closed = true } }

    var isClosed: Bool { lock.withLock { closed } }

    func open() {
        let resumed = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            closed = false
            defer { waiting.removeAll() }
            return waiting
        }
        resumed.forEach { $0.resume() }
    }

    func pass() async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock { () -> Bool in
                if closed { waiting.append(continuation) }
                return !closed
            }
            if now { continuation.resume() }
        }
    }
}

/// Engine events posted but not yet applied (the mailbox), applied when the supervisor asks for a barrier.
private actor InFlightEvents {
    private var supervisor: JobSupervisor?
    private var held: [TransferEvent] = []

    func set(_ supervisor: JobSupervisor) { self.supervisor = supervisor }
    func hold(_ event: TransferEvent) { held.append(event) }

    func applyAll() async {
        let events = held
        held = []
        for event in events { await supervisor?.apply(event) }
    }
}
