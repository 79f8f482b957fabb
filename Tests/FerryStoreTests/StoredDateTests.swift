import Foundation
import Testing
@testable import FerryStore

@Suite("StoredDate and small model rules")
struct StoredDateTests {
    @Test(arguments: [0.0, 0.000_4, 0.000_5, 0.999_6, 1_795_000_000.123_456, 1_795_000_000.999_9, -1.234_56,
                      4_102_444_800.001])
    func normalizationIsIdempotentAndSurvivesTheColumnRoundTrip(seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let normalized = StoredDate.normalize(date)
        #expect(StoredDate.normalize(normalized) == normalized)
        #expect(StoredDate.date(seconds: StoredDate.seconds(date)) == normalized)
        #expect(abs(normalized.timeIntervalSince1970 - seconds) <= 0.000_5 + 1e-6)
    }

    @Test func roundsToTheNearestMillisecond() {
        #expect(StoredDate.milliseconds(Date(timeIntervalSince1970: 1.000_4)) == 1000)
        #expect(StoredDate.milliseconds(Date(timeIntervalSince1970: 1.000_6)) == 1001)
        #expect(StoredDate.milliseconds(Date(timeIntervalSince1970: 1_795_000_000.999_9)) == 1_795_000_001_000)
    }

    @Test func storedFormOnlyTouchesDates() {
        let full = JobRecord.makeFull("x")
        var stored = full.storedForm
        #expect(stored.createdAt != full.createdAt)
        stored.createdAt = full.createdAt
        stored.startedAt = full.startedAt
        stored.finishedAt = full.finishedAt
        stored.updatedAt = full.updatedAt
        #expect(stored == full)
    }

    @Test(arguments: [(-10, 1), (0, 1), (1, 1), (100, 100), (1000, 1000), (1001, 1000), (Int.max, 1000)])
    func pageLimitIsClamped(requested: Int, clamped: Int) {
        #expect(JobPage.clampedLimit(requested) == clamped)
    }

    @Test func onlyFinishedAndCancelledAreTerminal() {
        #expect(JobState.allCases.filter(\.isTerminal) == [.finished, .cancelled])
    }

    @Test func jobRecordCodableRoundTrip() throws {
        let full = JobRecord.makeFull("x").storedForm
        let decoded = try JSONDecoder().decode(JobRecord.self, from: JSONEncoder().encode(full))
        #expect(decoded == full)
    }
}
