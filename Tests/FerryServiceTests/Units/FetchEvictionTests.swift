import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("Fetch-through: eviction, progress and counters")
struct FetchEvictionTests {
    private let base = Date(timeIntervalSince1970: 1_800_000_000)

    private func candidate(_ id: String, _ bytes: Int64, usedAgo seconds: Double) -> FetchEviction.Candidate {
        FetchEviction.Candidate(jobID: id, bytes: bytes, lastUsed: base.addingTimeInterval(-seconds))
    }

    @Test func leastRecentlyUsedGoFirstUntilTheNewFileFits() {
        let candidates = [candidate("new", 100, usedAgo: 1), candidate("old", 100, usedAgo: 300),
                          candidate("mid", 100, usedAgo: 60)]
        #expect(FetchEviction.victims(candidates, held: 300, need: 100, quota: 400) == [])
        #expect(FetchEviction.victims(candidates, held: 300, need: 150, quota: 400) == ["old"])
        #expect(FetchEviction.victims(candidates, held: 300, need: 250, quota: 400) == ["old", "mid"])
        #expect(FetchEviction.victims(candidates, held: 300, need: 1000, quota: 400) == ["old", "mid", "new"])
        #expect(FetchEviction.victims([], held: 300, need: 1000, quota: 400) == [])
    }

    @Test func progressSaysWhenTheHeadCanBeWritten() {
        var job = JobRecord(id: "j", url: "http://o.test/x", state: .waiting, dedupeKey: "k", createdAt: base)
        #expect(FetchProgress.classify(nil) == .gone)
        #expect(FetchProgress.classify(job) == .pending)
        job.state = .downloading
        #expect(FetchProgress.classify(job) == .pending)
        job.finalURL = "http://o.test/x"
        #expect(FetchProgress.classify(job) == .responded(job))
        job.state = .waiting
        job.error = JobFailure(code: .retrying, message: "attempt 1 failed", httpStatus: 503)
        #expect(FetchProgress.classify(job) == .failed(job, job.error!))
        job.state = .failed
        job.error = JobFailure(code: .httpError, message: "the origin answered 404", httpStatus: 404)
        #expect(FetchProgress.classify(job) == .failed(job, job.error!))
        job.state = .cancelled
        #expect(FetchProgress.classify(job) == .gone)
        job.state = .finished
        #expect(FetchProgress.classify(job) == .finished(job))
    }

    @Test func originFailuresKeepTheirStatus() {
        let notFound = FetchController.originFailure(JobFailure(code: .httpError, message: "404", httpStatus: 404))
        #expect(notFound.status.code == 404)
        let retried = FetchController.originFailure(JobFailure(code: .retrying, message: "attempt 1 failed; retrying at …", httpStatus: 503))
        #expect(retried.status.code == 503)
        guard case .bytes(let body) = retried.body else { Issue.record("no JSON body"); return }
        #expect(String(decoding: body, as: UTF8.self).contains("the origin answered 503"))
        let refused = FetchController.originFailure(JobFailure(code: .forbiddenDestination, message: "loopback"))
        #expect(refused.status.code == 403)
        let down = FetchController.originFailure(JobFailure(code: .networkError, message: "connection refused"))
        #expect(down.status.code == 502)
        #expect(FetchRevalidation.isUnreachable(JobFailure(code: .networkError, message: "refused")))
        #expect(FetchRevalidation.isUnreachable(JobFailure(code: .retrying, message: "503", httpStatus: 503)))
        #expect(!FetchRevalidation.isUnreachable(JobFailure(code: .httpError, message: "404", httpStatus: 404)))
        #expect(!FetchRevalidation.isUnreachable(JobFailure(code: .forbiddenDestination, message: "no")))
    }

    @Test func countersShowEveryResult() {
        let counters = FetchCounters()
        counters.answered("hit", bytes: 10, fromCache: true)
        counters.answered("miss", bytes: 7, fromCache: false)
        counters.answered("hit", bytes: 5, fromCache: true)
        let text = counters.render()
        #expect(text.contains("ferry_fetch_requests_total{result=\"hit\"} 2\n"))
        #expect(text.contains("ferry_fetch_requests_total{result=\"stale\"} 0\n"))
        #expect(text.contains("ferry_fetch_served_bytes_total{source=\"cache\"} 15\n"))
        #expect(text.contains("ferry_fetch_served_bytes_total{source=\"origin\"} 7\n"))
    }
}
