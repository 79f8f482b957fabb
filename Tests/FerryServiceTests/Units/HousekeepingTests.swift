import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("Spool housekeeping rules")
struct HousekeepingTests {
    static let base = Date(timeIntervalSince1970: 1_800_000_000)

    func job(_ id: String, _ state: JobState, endedSecondsAgo: Double?, sequence: Int64 = 0, bytes: Int64 = 0) -> JobRecord {
        var job = JobRecord(id: id, url: "https://o.example/\(id)", state: state, dedupeKey: id, createdAt: Self.base.addingTimeInterval(-1000))
        job.sequence = sequence
        job.bytesReceived = bytes
        job.updatedAt = Self.base.addingTimeInterval(-500)
        job.finishedAt = endedSecondsAgo.map { Self.base.addingTimeInterval(-$0) }
        return job
    }

    @Test func purgeTakesOnlyEndedJobsOlderThanTheCutoffOldestFirst() {
        let jobs = [
            job("new", .finished, endedSecondsAgo: 10),
            job("old", .finished, endedSecondsAgo: 300),
            job("older-failed", .failed, endedSecondsAgo: 400),
            job("cancelled", .cancelled, endedSecondsAgo: 200),
            job("running", .downloading, endedSecondsAgo: nil),
            job("paused", .paused, endedSecondsAgo: nil),
        ]
        let selection = PurgeSelection(cutoff: Self.base.addingTimeInterval(-100))
        #expect(selection.select(jobs).map(\.id) == ["older-failed", "old", "cancelled"])
        let finishedOnly = PurgeSelection(states: [.finished], cutoff: Self.base.addingTimeInterval(-100))
        #expect(finishedOnly.select(jobs).map(\.id) == ["old"])
        // A job with no finishedAt is aged by its last change.
        let undated = job("undated", .cancelled, endedSecondsAgo: nil)
        #expect(PurgeSelection(cutoff: Self.base.addingTimeInterval(-600)).select([undated]).isEmpty)
        #expect(PurgeSelection(cutoff: Self.base.addingTimeInterval(-400)).select([undated]).map(\.id) == ["undated"])
    }

    @Test func equalEndTimesKeepSubmissionOrder() {
        let jobs = [job("b", .finished, endedSecondsAgo: 50, sequence: 2), job("a", .finished, endedSecondsAgo: 50, sequence: 1)]
        #expect(PurgeSelection(cutoff: Self.base).select(jobs).map(\.id) == ["a", "b"])
    }

    @Test func purgeQueryNeedsOlderThanAndOnlyEndedStates() throws {
        #expect(throws: APIError.self) { try JobsController.purgeSelection(state: nil, olderThan: nil, now: Self.base) }
        #expect(throws: APIError.self) { try JobsController.purgeSelection(state: nil, olderThan: "soon", now: Self.base) }
        #expect(throws: APIError.self) { try JobsController.purgeSelection(state: "downloading", olderThan: "1d", now: Self.base) }
        let byDuration = try JobsController.purgeSelection(state: "finished, failed", olderThan: "7d", now: Self.base)
        #expect(byDuration == PurgeSelection(states: [.finished, .failed], cutoff: Self.base.addingTimeInterval(-7 * 86_400)))
        let byTime = try JobsController.purgeSelection(state: nil, olderThan: "2027-01-15T08:00:00Z", now: Self.base)
        #expect(byTime.states == PurgeSelection.endedStates)
        #expect(abs(byTime.cutoff.timeIntervalSince1970 - 1_800_000_000) < 1, "2027-01-15T08:00:00Z is 1.8e9 s after the epoch")
    }

    @Test func retentionSweepsOftenEnoughButNotTooOften() {
        #expect(RetentionSchedule.interval(for: 1) == 1)
        #expect(RetentionSchedule.interval(for: 20) == 5)
        #expect(RetentionSchedule.interval(for: 7 * 86_400) == 60)
    }

    @Test func budgetCountsHeldBytesAndAdmitsWhatFits() {
        let jobs = [job("a", .finished, endedSecondsAgo: 1, bytes: 600), job("b", .paused, endedSecondsAgo: nil, bytes: 300),
                    job("c", .cancelled, endedSecondsAgo: 1, bytes: 999)]
        #expect(SpoolBudget.held(by: jobs) == 900)
        #expect(SpoolBudget.held(by: jobs, excluding: "b") == 600)
        let budget = SpoolBudget(quota: 1000)
        #expect(!budget.isFull(held: 900))
        #expect(budget.isFull(held: 1000))
        #expect(budget.room(for: 400, othersHeld: 600) == 400)
        #expect(budget.room(for: 401, othersHeld: 600) == nil)
        #expect(budget.room(for: nil, othersHeld: 600) == 400)
        #expect(budget.room(for: nil, othersHeld: 1200) == 0)
    }

    /// A failure that deleted the job's bytes holds nothing; a running transfer's claim counts in full.
    @Test func budgetCountsClaimsAndNothingForDiscardedBytes() {
        var failed = job("f", .failed, endedSecondsAgo: 1, bytes: 500)
        failed.error = JobFailure(code: .quotaExceeded, message: "", httpStatus: nil)
        var checksum = job("s", .failed, endedSecondsAgo: 1, bytes: 400)
        checksum.error = JobFailure(code: .checksumMismatch, message: "", httpStatus: nil)
        var network = job("n", .failed, endedSecondsAgo: 1, bytes: 300)
        network.error = JobFailure(code: .networkError, message: "", httpStatus: nil)
        let running = job("r", .downloading, endedSecondsAgo: nil, bytes: 100)
        #expect(SpoolBudget.held(by: [failed, checksum, network, running]) == 400)
        #expect(SpoolBudget.held(by: [failed, checksum, network, running], claims: ["r": 1_000]) == 1_300)
        #expect(SpoolBudget.held(by: [running], claims: ["r": 50]) == 100)
    }

    /// A key's jobs downloading without a claim on this node (another node runs them) count at their expected size;
    /// this node's claims win; stopped jobs and unknown sizes add no claim.
    @Test func keyClaimsCountJobsRunningElsewhereAtTheirExpectedSize() {
        var elsewhere = job("e", .downloading, endedSecondsAgo: nil, bytes: 100)
        elsewhere.bytesExpected = 4_000
        var local = job("l", .downloading, endedSecondsAgo: nil, bytes: 10)
        local.bytesExpected = 2_000
        var unknown = job("u", .downloading, endedSecondsAgo: nil, bytes: 70)
        unknown.bytesExpected = nil
        var paused = job("p", .paused, endedSecondsAgo: nil, bytes: 300)
        paused.bytesExpected = 9_000
        let jobs = [elsewhere, local, unknown, paused]
        let claims = KeySpoolQuota.claims(of: jobs, besides: ["l": 1_500])
        #expect(claims == ["e": 4_000, "l": 1_500])
        #expect(SpoolBudget.held(by: jobs, excluding: "l", claims: claims) == 4_000 + 70 + 300)
    }
}
