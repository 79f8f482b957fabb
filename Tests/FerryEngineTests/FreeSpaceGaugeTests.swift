@testable import FerryEngine
import Testing

struct FreeSpaceGaugeTests {
    private static let gib: Int64 = 1 << 30

    @Test func aRecentReadingWellAboveTheReserveStandsIn() {
        var gauge = FreeSpaceGauge(maxAge: 0.25, margin: 256 << 20)
        #expect(gauge.cached(now: 10, reserve: Self.gib) == nil)
        gauge.record(10 * Self.gib, at: 10)
        #expect(gauge.cached(now: 10.1, reserve: Self.gib) == 10 * Self.gib)
    }

    @Test func anOldReadingIsReadAgain() {
        var gauge = FreeSpaceGauge(maxAge: 0.25, margin: 256 << 20)
        gauge.record(10 * Self.gib, at: 10)
        #expect(gauge.cached(now: 10.25, reserve: Self.gib) == nil)
        #expect(gauge.cached(now: 9, reserve: Self.gib) == nil)  // a clock that went back proves nothing
    }

    @Test func aReadingNearTheReserveIsReadAgain() {
        var gauge = FreeSpaceGauge(maxAge: 0.25, margin: 256 << 20)
        gauge.record(Self.gib + (256 << 20) - 1, at: 10)
        #expect(gauge.cached(now: 10, reserve: Self.gib) == nil)
        gauge.record(Self.gib + (256 << 20), at: 10)
        #expect(gauge.cached(now: 10, reserve: Self.gib) != nil)
    }

    @Test func whatTheCallerTakesCountsAgainstTheMargin() {
        var gauge = FreeSpaceGauge(maxAge: 0.25, margin: 256 << 20)
        gauge.record(4 * Self.gib, at: 10)
        #expect(gauge.cached(now: 10, reserve: Self.gib, needed: 2 * Self.gib) == 4 * Self.gib)
        #expect(gauge.cached(now: 10, reserve: Self.gib, needed: 3 * Self.gib) == nil)
        #expect(gauge.cached(now: 10, reserve: .max, needed: .max) == nil)
    }

    @Test func aFailedReadingCachesNothing() {
        var gauge = FreeSpaceGauge()
        gauge.record(10 * Self.gib, at: 10)
        gauge.record(nil, at: 10.1)
        #expect(gauge.cached(now: 10.1, reserve: 0) == nil)
    }
}
