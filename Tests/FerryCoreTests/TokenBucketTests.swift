import FerryCore
import Testing

/// `TokenBucket` on a fake clock: one consumer taking 16 KiB chunks as the engine does (ask, take, or wait the
/// bucket's delay), woken on time or late as a busy machine wakes it.
@Suite("TokenBucket")
struct TokenBucketTests {
    static let chunk = 16_384

    /// Bytes passed in `seconds` when every wait ends `lateness` seconds after the bucket's delay. `hop`: the time
    /// between two chunks that pass (as the engine reads, one socket read after another; 0: all at the same moment).
    static func run(rate: Int64, seconds: Double, lateness: Double, hop: Double = 0) -> Double {
        var bucket = TokenBucket(bytesPerSecond: rate, now: 0)
        var now = 0.0, passed = 0.0
        while now < seconds {
            if bucket.mayPass(now: now) {
                bucket.take(chunk, now: now)
                passed += Double(chunk)
                now += hop
            } else {
                now += bucket.delay(now: now) + lateness
            }
        }
        return passed
    }

    @Test func punctualWakeUpsPassTheRate() {
        let passed = Self.run(rate: 900_000, seconds: 10, lateness: 0)
        #expect(abs(passed - 9_000_000) <= 900_000 * 0.05 + Double(Self.chunk), "\(passed)")
    }

    /// A busy machine wakes the paused connection late: the time past its due moment is made up (up to a limit), so
    /// the rate holds instead of losing everything beyond the small burst each time.
    @Test(arguments: [0.02, 0.08, 0.1])
    func lateWakeUpsStillPassTheRate(lateness: Double) {
        let passed = Self.run(rate: 900_000, seconds: 10, lateness: lateness)
        #expect(passed >= 9_000_000 * 0.97, "\(passed) bytes in 10 s, waking \(lateness) s late")
        #expect(passed <= 9_000_000 * 1.01 + 900_000 * 0.15 + Double(Self.chunk), "\(passed)")
    }

    /// What a late wake-up makes up is spent over the reads that follow it, not only at the moment of waking: a
    /// refill a moment later must not cut the balance back to the burst (it did: a late wake-up then made up one
    /// chunk at most, and a busy machine got 0.89× its limit).
    @Test(arguments: [0.04, 0.08, 0.1])
    func aMakeUpLastsUntilItIsSpent(lateness: Double) {
        let passed = Self.run(rate: 900_000, seconds: 10, lateness: lateness, hop: 0.0005)
        #expect(passed >= 9_000_000 * 0.97, "\(passed) bytes in 10 s, waking \(lateness) s late, reads 0.5 ms apart")
        #expect(passed <= 9_000_000 * 1.01 + 900_000 * 0.15 + Double(Self.chunk), "\(passed)")
    }

    /// What is made up is bounded: a wake-up a second late passes at most the burst and the make-up at once.
    @Test func aVeryLateWakeUpIsMadeUpOnlyInPart() {
        var bucket = TokenBucket(bytesPerSecond: 1_000_000, now: 0)
        bucket.take(100_000, now: 0)   // a debt of 0.05 s beyond the burst
        let due = bucket.delay(now: 0)
        var passed = 0
        let late = due + 1.0
        while bucket.mayPass(now: late) {
            bucket.take(Self.chunk, now: late)
            passed += Self.chunk
        }
        #expect(Double(passed) <= 1_000_000 * (bucket.burstSeconds + TokenBucket.makeUpSeconds) + Double(Self.chunk), "\(passed)")
        #expect(Double(passed) >= 1_000_000 * (bucket.burstSeconds + TokenBucket.makeUpSeconds) - Double(Self.chunk), "\(passed)")
    }

    /// While nothing is asked (no debt), the balance saves up only the small burst.
    @Test func idleTimeSavesOnlyTheBurst() {
        var bucket = TokenBucket(bytesPerSecond: 1_000_000, now: 0)
        var passed = 0
        while bucket.mayPass(now: 10) {
            bucket.take(1_000, now: 10)
            passed += 1_000
        }
        #expect(Double(passed) <= 1_000_000 * bucket.burstSeconds + 1_000)
    }
}
