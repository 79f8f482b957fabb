import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// The supervisor commits a job's webhook notices with the state change that causes them: finished, failed and
/// cancelled, to the job's `notify` and the global URL; nothing for other changes or jobs nobody listens to.
@Suite("Supervisor: webhook notices")
struct WebhookNoticeSupervisorTests {
    @Test func aFinishedJobLeavesANoticeForItsNotifyAndTheGlobalURL() async throws {
        let h = SupervisorHarness(webhookURL: "https://hooks.example/all")
        let job = try await h.create("https://example.org/file.iso") { $0.notify = "https://u:p@hooks.example/one" }
        #expect(job.notify == "https://u:p@hooks.example/one")
        await h.supervisor.apply(.started(id: job.id, offset: 0))
        await h.settle()
        #expect(await h.store.pendingNotices(limit: 10).isEmpty)  // downloading: no notice
        await h.supervisor.apply(.finished(id: job.id, JobSupervisorTests.file("file.iso")))
        await h.settle()
        let notices = await h.store.pendingNotices(limit: 10)
        #expect(Set(notices.map(\.url)) == ["https://u:p@hooks.example/one", "https://hooks.example/all"])
        #expect(Set(notices.map(\.id)).count == 2)
        for notice in notices {
            #expect(notice.type == "job.finished" && notice.jobID == job.id && notice.attempts == 0)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(notice.body)) as? [String: Any])
            #expect(body["type"] as? String == "job.finished")
            #expect(body["timestamp"] as? String == Timestamp.rfc3339(Date(timeIntervalSince1970: 1_800_000_000)))
            let data = try #require(body["data"] as? [String: Any])
            #expect(data["id"] as? String == job.id && data["state"] as? String == "finished")
            #expect(data["notify"] as? String == "https://***@hooks.example/one")  // userinfo never shown
        }
        // The job's state and its notices were written together.
        #expect(await h.store.job(id: job.id)?.state == .finished)
    }

    @Test func failedAndCancelledJobsLeaveTheirNotices() async throws {
        let h = SupervisorHarness()
        let failing = try await h.create("https://example.org/a") { $0.notify = "https://hooks.example/x" }
        let cancelled = try await h.create("https://example.org/b") { $0.notify = "https://hooks.example/x" }
        let silent = try await h.create("https://example.org/c")
        await h.supervisor.apply(.failed(id: failing.id, JobFailure(code: .httpError, message: "404", httpStatus: 404)))
        _ = try await h.supervisor.cancel(cancelled.id)
        _ = try await h.supervisor.cancel(silent.id)
        _ = try await h.supervisor.cancel(cancelled.id)  // a no-op: no second notice
        await h.settle()
        let notices = await h.store.pendingNotices(limit: 10)
        #expect(notices.map(\.type).sorted() == ["job.cancelled", "job.failed"])
        #expect(Set(notices.map(\.jobID)) == [failing.id, cancelled.id])
    }

    @Test func aPrivateNotifyURLIsRefusedAtSubmit() throws {
        #expect(throws: APIError.self) {
            _ = try SupervisorHarness.draft("https://example.org/a") { $0.notify = "http://127.0.0.1:9/hook" }
        }
        #expect(throws: APIError.self) {
            _ = try SupervisorHarness.draft("https://example.org/a") { $0.notify = "ftp://hooks.example/x" }
        }
        let allowed = try JobDraft.validate(
            { var body = JobDraft.Body(); body.url = "https://example.org/a"; body.notify = "http://127.0.0.1:9/hook"; return body }(),
            destinations: AddressPolicy(allowedNetworks: [IPNetwork("127.0.0.1/32")!]))
        #expect(allowed.notify?.normalized == "http://127.0.0.1:9/hook")
    }
}
