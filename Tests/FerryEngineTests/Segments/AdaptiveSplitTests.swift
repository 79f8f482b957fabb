@testable import FerryEngine
import Testing

/// The ramp of connections for a download that did not ask for a number, on a fake clock (`AdaptiveSplit`).
@Suite("AdaptiveSplit")
struct AdaptiveSplitTests {
    private let mib: Int64 = 1 << 20
    private let big: Int64 = 1 << 30

    /// Feeds ticks every 0.25 s at `rate(level)` bytes per second until `until`; returns the levels asked for.
    private func ramp(_ split: inout AdaptiveSplit, until: Double, remaining: Int64, rate: (Int) -> Double) -> [Int] {
        var now = 0.0, received: Int64 = 0, asked: [Int] = []
        while now < until {
            now += 0.25
            received += Int64(rate(split.level) * 0.25)
            if let level = split.decide(now: now, bytesReceived: received, remaining: remaining - received, minimumPiece: mib) {
                asked.append(level)
            }
        }
        return asked
    }

    @Test func aFastSingleConnectionIsLeftAlone() {
        var split = AdaptiveSplit(wanted: 4, now: 0, bytesReceived: 0)
        #expect(ramp(&split, until: 10, remaining: big) { _ in 800e6 } == [])
        #expect(split.isFinished && split.level == 1)
    }

    @Test func aCappedOriginRampsToWantedWhileEachLevelGains() {
        // 20 MiB/s per connection: every level doubles the total.
        var split = AdaptiveSplit(wanted: 4, now: 0, bytesReceived: 0)
        #expect(ramp(&split, until: 10, remaining: big) { Double($0) * 20 * 1_048_576 } == [2, 4])
        #expect(split.isFinished && split.level == 4)
    }

    @Test func theRampStopsWhereAnotherConnectionGainsNothing() {
        // A path that one connection already fills at 30 MiB/s (below fastEnough): two get no more.
        var split = AdaptiveSplit(wanted: 16, now: 0, bytesReceived: 0)
        #expect(ramp(&split, until: 10, remaining: big) { _ in 30 * 1_048_576 } == [2])
        #expect(split.isFinished && split.level == 2)
    }

    /// The first window of a level holds its new connections' start (and, on a busy machine, time the process did not
    /// run): a level that misses its gain there but makes it in a second window goes on.
    @Test func aLevelThatMissesOnceIsMeasuredAgain() {
        var split = AdaptiveSplit(wanted: 4, tuning: .init(settle: 1), now: 0, bytesReceived: 0)
        #expect(split.decide(now: 1, bytesReceived: 1_000_000, remaining: big, minimumPiece: mib) == 2)
        // Two connections, but the second one started late: 1.1 MB/s against 1 MB/s before.
        #expect(split.decide(now: 2, bytesReceived: 2_100_000, remaining: big, minimumPiece: mib) == nil)
        #expect(!split.isFinished)
        // Its second window: 2 MB/s.
        #expect(split.decide(now: 3, bytesReceived: 4_100_000, remaining: big, minimumPiece: mib) == 4)
    }

    @Test func eachLevelIsMeasuredForTheSettleTimeFirst() {
        var split = AdaptiveSplit(wanted: 8, tuning: .init(settle: 2), now: 0, bytesReceived: 0)
        #expect(split.decide(now: 1.9, bytesReceived: 19_000_000, remaining: big, minimumPiece: mib) == nil)
        #expect(split.decide(now: 2.0, bytesReceived: 20_000_000, remaining: big, minimumPiece: mib) == 2)
        // The next level's window starts at 2.0 s with 20 MB: 1.9 s later is still too early.
        #expect(split.decide(now: 3.9, bytesReceived: 58_000_000, remaining: big, minimumPiece: mib) == nil)
        #expect(split.decide(now: 4.0, bytesReceived: 60_000_000, remaining: big, minimumPiece: mib) == 4)
    }

    @Test func tooLittleLeftEndsTheRamp() {
        var split = AdaptiveSplit(wanted: 4, now: 0, bytesReceived: 0)
        // 3 MiB left: two connections would need 2 × 2 × 1 MiB.
        #expect(split.decide(now: 1, bytesReceived: 1_000_000, remaining: 3 * mib, minimumPiece: mib) == nil)
        #expect(split.isFinished)
    }

    @Test func oneWantedConnectionNeverRamps() {
        var split = AdaptiveSplit(wanted: 1, now: 0, bytesReceived: 0)
        #expect(split.isFinished)
        #expect(split.decide(now: 5, bytesReceived: 1, remaining: big, minimumPiece: mib) == nil)
    }
}
