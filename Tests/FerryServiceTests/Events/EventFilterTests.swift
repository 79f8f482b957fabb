import Foundation
import Testing
@testable import FerryService

@Suite struct EventFilterTests {
    typealias F = EventFixture

    @Test func allJobsAdmitsEveryJob() {
        #expect(EventFilter.allJobs.admits(F.job(1, "a")))
        #expect(EventFilter.allJobs.admits(F.progress(2, "b")))
        #expect(EventFilter.allJobs.admits(F.removed(3, "c")))
    }

    @Test func jobSetAdmitsOnlyItsJobs() {
        let filter = EventFilter.jobs(["a", "c"])
        #expect(filter.admits(F.job(1, "a")))
        #expect(!filter.admits(F.progress(2, "b")))
        #expect(filter.admits(F.removed(3, "c")))
        #expect(!filter.admits(F.job(4, "ab")))
        #expect(!filter.admits(ServerEvent.reset()))
    }

    @Test func parsesTheJobsQuery() {
        #expect(EventFilter(jobsQuery: nil) == .allJobs)
        #expect(EventFilter(jobsQuery: "") == .allJobs)
        #expect(EventFilter(jobsQuery: " , ,") == .allJobs)
        #expect(EventFilter(jobsQuery: "a") == .jobs(["a"]))
        #expect(EventFilter(jobsQuery: "a, b,,a ") == .jobs(["a", "b"]))
    }
}
