import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("Fetch-through on several nodes: one job per URL")
struct FetchClusterDedupeTests {
    private func job(_ id: String, _ sequence: Int64, _ state: JobState = .downloading, key: String = "k",
                     tags: [String] = [FetchCache.tag]) -> JobRecord {
        var job = JobRecord(id: id, sequence: sequence, url: "http://o.test/f", state: state, dedupeKey: key, createdAt: Date())
        job.tags = tags
        return job
    }

    @Test func theYoungerOfTwoJobsOfAKeyGivesWayToTheOldestLiveOne() {
        let mine = job("b", 7)
        #expect(FetchClusterDedupe.olderJob(than: mine, among: [mine, job("a", 5), job("c", 6, .waiting)])?.id == "a")
        // The oldest keeps its job: both nodes settle on it.
        #expect(FetchClusterDedupe.olderJob(than: job("a", 5), among: [job("a", 5), mine]) == nil)
        // Not given way to: a failed or cancelled job, another key's, a job the API created (no fetch tag).
        #expect(FetchClusterDedupe.olderJob(than: mine, among: [job("x", 1, .failed), job("y", 2, .cancelled),
                                                                 job("z", 3, key: "other"), job("w", 4, tags: [])]) == nil)
        // A finished one is given way to: its file answers.
        #expect(FetchClusterDedupe.olderJob(than: mine, among: [job("f", 2, .finished)])?.id == "f")
    }
}
