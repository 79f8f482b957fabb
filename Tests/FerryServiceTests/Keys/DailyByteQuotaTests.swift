import Foundation
import Testing
@testable import FerryService
import FerryStore

/// A key's rolling 24 hours of fetched bytes (`bytesPerDay`), on a fake clock.
@Suite("Daily byte quota")
struct DailyByteQuotaTests {
    /// The start of a 15-minute bucket.
    let start = Date(timeIntervalSince1970: TimeInterval(1_800_000_000 - 1_800_000_000 % 900))

    func at(_ seconds: TimeInterval) -> Date { start.addingTimeInterval(seconds) }

    @Test func bytesCountForTwentyFourHoursThenLeave() {
        var quota = DailyByteQuota()
        quota.count(600, for: "k", at: at(0))
        quota.count(400, for: "k", at: at(3_600))
        quota.count(50, for: "other", at: at(10))
        #expect(quota.fetched(by: "k", at: at(7_200)) == 1_000)
        #expect(quota.fetched(by: "other", at: at(7_200)) == 50)
        // The first bucket leaves once it is 24 hours old (at the start of the bucket a day later).
        #expect(quota.fetched(by: "k", at: at(86_399)) == 1_000)
        #expect(quota.fetched(by: "k", at: at(86_400)) == 400)
        #expect(quota.fetched(by: "k", at: at(86_400 + 3_600)) == 0)
        #expect(quota.fetched(by: "nobody", at: at(0)) == 0)
    }

    @Test func overSaysWhenTheWindowHoldsLessThanTheLimitAgain() {
        var quota = DailyByteQuota()
        quota.count(600, for: "k", at: at(0))
        quota.count(400, for: "k", at: at(3_600))
        #expect(quota.over(1_001, key: "k", at: at(3_700)) == nil)
        // At 1,000 bytes a limit of 1,000 is reached; the 600 leave a day after their bucket began.
        #expect(quota.over(1_000, key: "k", at: at(3_700)) == at(86_400))
        // Under a limit of 300 only when both buckets have left.
        #expect(quota.over(300, key: "k", at: at(3_700)) == at(86_400 + 3_600))
        #expect(quota.over(300, key: "k", at: at(86_400 + 3_600)) == nil)
    }

    @Test func aLimitOfZeroIsNeverUnder() {
        let quota = DailyByteQuota()
        #expect(quota.over(0, key: "k", at: at(0)) == .distantFuture)
        #expect(quota.over(1, key: "k", at: at(0)) == nil)
    }

    @Test func aBucketReusedADayLaterStartsFromZero() {
        var quota = DailyByteQuota()
        quota.count(700, for: "k", at: at(100))
        // Same slot of the ring, one day later: the old count is gone, not added to.
        quota.count(5, for: "k", at: at(86_400 + 100))
        #expect(quota.fetched(by: "k", at: at(86_400 + 200)) == 5)
        // Two days of silence clear everything.
        quota.count(1, for: "k", at: at(3 * 86_400))
        #expect(quota.fetched(by: "k", at: at(3 * 86_400)) == 1)
    }

    @Test func aSampleFromBeforeTheWindowIsNotCounted() {
        var quota = DailyByteQuota()
        quota.count(10, for: "k", at: at(2 * 86_400))
        quota.count(99, for: "k", at: at(0))  // the clock stepped back two days
        #expect(quota.fetched(by: "k", at: at(2 * 86_400)) == 10)
    }

    @Test func parkedJobsAreTakenOnceAndWakesAreNotDoubled() {
        var quota = DailyByteQuota()
        quota.park("a", key: "k")
        quota.park("b", key: "k")
        quota.forget("b", key: "k")
        #expect(quota.isParked("a", key: "k") && !quota.isParked("b", key: "k"))
        let taken = quota.unpark(key: "k"), second = quota.unpark(key: "k")
        #expect(taken == ["a"] && second.isEmpty)
        let first = quota.needsWake(key: "k", at: at(900))
        let later = quota.needsWake(key: "k", at: at(1_800))
        let earlier = quota.needsWake(key: "k", at: at(450))
        #expect(first && !later && earlier, "a wake due by then looks again itself; an earlier one is scheduled")
        quota.woke(key: "k")
        let again = quota.needsWake(key: "k", at: at(1_800))
        #expect(again)
    }

    @Test func retryAfterIsWholeSecondsBetweenOneAndADay() {
        #expect(JobSupervisor.retryAfter(at(10.2), from: at(0)) == 11)
        #expect(JobSupervisor.retryAfter(at(0), from: at(5)) == 1)
        #expect(JobSupervisor.retryAfter(.distantFuture, from: at(0)) == 86_400)
    }

    @Test func countsAreTakenForTheStoreOnceAndGivenBackWhenItFails() {
        var quota = DailyByteQuota()
        let bucket = DailyByteQuota.bucket(at: at(0))
        quota.count(600, for: "k", at: at(0))
        quota.count(40, for: "k", at: at(10))
        quota.count(7, for: "j", at: at(900))
        let first = quota.takeUnwritten()
        #expect(Set(first) == [KeyUsage(key: "k", bucket: bucket, bytes: 640),
                                               KeyUsage(key: "j", bucket: bucket + 1, bytes: 7)])
        let none = quota.takeUnwritten()
        #expect(none.isEmpty)
        quota.count(1, for: "k", at: at(20))
        quota.returnUnwritten([KeyUsage(key: "k", bucket: bucket, bytes: 640)])
        let again = quota.takeUnwritten()
        #expect(again == [KeyUsage(key: "k", bucket: bucket, bytes: 641)])
        // Taking leaves the window as it was.
        #expect(quota.fetched(by: "k", at: at(30)) == 641)
    }

    @Test func aLoadedWindowIsTheStoresCountsPlusWhatIsNotWrittenYet() {
        var quota = DailyByteQuota()
        let bucket = DailyByteQuota.bucket(at: at(0))
        quota.count(100, for: "k", at: at(0))
        let written = quota.takeUnwritten()
        quota.count(5, for: "k", at: at(60))  // counted while the write was under way
        quota.count(9, for: "other", at: at(60))
        // The store holds this node's write and another node's bytes, and an old bucket no longer in the window.
        let stored = written + [KeyUsage(key: "k", bucket: bucket - 2, bytes: 1_000),
                                KeyUsage(key: "k", bucket: bucket - 96, bytes: 1 << 40)]
        quota.load(stored, keys: ["k"], at: at(120))
        #expect(quota.fetched(by: "k", at: at(120)) == 1_105)
        #expect(quota.fetched(by: "other", at: at(120)) == 9, "keys not loaded keep their own count")
        #expect(quota.over(1_105, key: "k", at: at(120)) != nil)
        // What was not written yet is still to write.
        let left = quota.takeUnwritten()
        #expect(Set(left) == [KeyUsage(key: "other", bucket: bucket, bytes: 9),
                                               KeyUsage(key: "k", bucket: bucket, bytes: 5)])
    }

    @Test func theStoreIsWrittenWhenSomethingWasCountedOrABucketIsToPurge() {
        var quota = DailyByteQuota()
        let some = [KeyUsage(key: "k", bucket: 5, bytes: 1)]
        let answers = [quota.needsWrite([], purgingBelow: 10), quota.needsWrite([], purgingBelow: 10),
                       quota.needsWrite(some, purgingBelow: 10), quota.needsWrite([], purgingBelow: 11),
                       quota.needsWrite([], purgingBelow: 11)]
        #expect(answers == [true, false, true, true, false])
    }
}
