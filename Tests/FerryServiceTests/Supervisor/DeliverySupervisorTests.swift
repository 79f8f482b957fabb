import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// The supervisor's delivery rules alone (fake engine, memory store, fixed clock): when the upload starts, what
/// its events do to the job, and what pause, resume and cancel do while it runs.
@Suite("Job supervisor, delivery")
struct DeliverySupervisorTests {
    let url = "http://example.org/file.iso"

    private func deliveredJob(_ h: SupervisorHarness, deleteAfter: Bool = false) async throws -> JobRecord {
        let job = try await h.create(url) {
            $0.deliver = JobDraft.DeliverBody(url: "https://target.example/up", deleteAfter: deleteAfter)
        }
        #expect(job.delivery?.state == .pending)
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.supervisor.apply(.finished(id: job.id, JobSupervisorTests.file("file.iso", size: 1_000)))
        h.engine.finishedFiles.insert("file.iso")
        return try #require(await h.job(job.id))
    }

    @Test func aVerifiedDownloadIsDeliveredBeforeItIsFinished() async throws {
        let h = SupervisorHarness()
        let job = try await deliveredJob(h)
        #expect(job.state == .delivering && job.finishedAt == nil)
        #expect(h.engine.log.contains("deliver \(job.id)"))
        await h.supervisor.apply(.delivering(id: job.id, DeliveryProgress(bytesSent: 0, bytesTotal: 1_000, bytesPerSecond: 0, eta: nil)))
        await h.supervisor.apply(.delivering(id: job.id, DeliveryProgress(bytesSent: 400, bytesTotal: 1_000, bytesPerSecond: 100, eta: 6)))
        let sending = try #require(await h.job(job.id))
        #expect(sending.delivery?.state == .sending && sending.delivery?.bytesSent == 400 && sending.delivery?.attempts == 1)
        let failure = JobFailure(code: .deliveryFailed, message: "the delivery target answered 503", httpStatus: 503)
        await h.supervisor.apply(.deliveryWaiting(id: job.id, at: Date(timeIntervalSince1970: 1_800_000_010), attempt: 1, failure: failure))
        let waiting = try #require(await h.job(job.id))
        #expect(waiting.state == .delivering && waiting.error?.code == .retrying && waiting.delivery?.httpStatus == 503)
        await h.supervisor.apply(.delivering(id: job.id, DeliveryProgress(bytesSent: 0, bytesTotal: 1_000, bytesPerSecond: 0, eta: nil)))
        #expect(await h.job(job.id)?.delivery?.attempts == 2)
        #expect(await h.job(job.id)?.error == nil)
        await h.supervisor.apply(.delivered(id: job.id, status: 201))
        let finished = try #require(await h.job(job.id))
        #expect(finished.state == .finished && finished.delivery?.state == .delivered && finished.delivery?.httpStatus == 201)
        #expect(finished.delivery?.deliveredAt == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(!h.engine.log.contains("discard \(job.id)"), "the file stays without deleteAfter")
        await h.settle()
        let states = h.published.jobEvents(job.id).compactMap { $0["state"] as? String }
        #expect(states.suffix(4) == ["delivering", "delivering", "delivering", "finished"])
    }

    @Test func deleteAfterRemovesTheFileOnceDelivered() async throws {
        let h = SupervisorHarness()
        let job = try await deliveredJob(h, deleteAfter: true)
        await h.supervisor.apply(.delivered(id: job.id, status: 204))
        #expect(h.engine.log.contains("discard \(job.id)"))
        #expect(await h.job(job.id)?.state == .finished)
    }

    @Test func pauseStopsTheUploadAndResumeDeliversWithoutDownloading() async throws {
        let h = SupervisorHarness()
        let job = try await deliveredJob(h)
        let paused = try await h.supervisor.pause(job.id)
        #expect(paused.state == .paused && paused.delivery?.state == .pending)
        #expect(h.engine.log.contains("stopDelivery \(job.id)"))
        let resumed = try await h.supervisor.resume(job.id)
        #expect(resumed.state == .delivering)
        #expect(h.engine.log.filter { $0 == "submit \(job.id)" }.count == 1, "not downloaded again")
        #expect(h.engine.log.filter { $0 == "deliver \(job.id)" }.count == 2)
    }

    @Test func aFailedDeliveryFailsTheJobAndCancelRemovesItsFile() async throws {
        let h = SupervisorHarness()
        let job = try await deliveredJob(h)
        await h.supervisor.apply(.deliveryFailed(id: job.id, JobFailure(code: .deliveryFailed, message: "the delivery target answered 403", httpStatus: 403)))
        let failed = try #require(await h.job(job.id))
        #expect(failed.state == .failed && failed.error?.code == .deliveryFailed && failed.delivery?.state == .failed)
        let cancelled = try await h.supervisor.cancel(job.id)
        #expect(cancelled.state == .cancelled)
        #expect(h.engine.log.contains("discard \(job.id)"), "the downloaded file goes with the job")
    }
}
