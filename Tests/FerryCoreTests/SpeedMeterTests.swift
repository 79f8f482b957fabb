import Testing
@testable import FerryCore

@Suite struct SpeedMeterTests {
    @Test func zeroBeforeTwoSamples() {
        var meter = SpeedMeter()
        #expect(meter.bytesPerSecond == 0)
        meter.record(totalBytes: 1000, at: 10)
        #expect(meter.bytesPerSecond == 0)
        #expect(meter.eta(remaining: 100) == nil)
        meter.record(totalBytes: 2000, at: 10)   // same instant: still no speed
        #expect(meter.bytesPerSecond == 0)
    }

    @Test func steadyRate() {
        var meter = SpeedMeter(window: 5)
        for tick in 0...40 {
            meter.record(totalBytes: Int64(tick) * 25_000, at: Double(tick) * 0.25)   // 100 kB/s
        }
        #expect(abs(meter.bytesPerSecond - 100_000) < 1e-6)
        #expect(abs(meter.eta(remaining: 250_000)! - 2.5) < 1e-9)
    }

    @Test func burstySamplesAreSmoothed() {
        var meter = SpeedMeter(window: 5)
        // 1 MB arrives at once every second, sampled 10 times a second: the speed must stay near 1 MB/s,
        // never drop to zero between bursts nor jump to 10 MB/s.
        var total: Int64 = 0
        var readings: [Double] = []
        for tick in 0..<200 {
            if tick % 10 == 0 { total += 1_000_000 }
            meter.record(totalBytes: total, at: Double(tick) / 10)
            if tick >= 60 { readings.append(meter.bytesPerSecond) }
        }
        for reading in readings {
            #expect(reading > 800_000 && reading < 1_250_000, "reading \(reading)")
        }
    }

    @Test func windowForgetsOldRates() {
        var meter = SpeedMeter(window: 2)
        for tick in 0...20 { meter.record(totalBytes: Int64(tick) * 1000, at: Double(tick) * 0.1) }     // 10 kB/s for 2 s
        let base: Int64 = 20_000
        for tick in 1...40 { meter.record(totalBytes: base + Int64(tick) * 100, at: 2 + Double(tick) * 0.1) } // then 1 kB/s
        #expect(abs(meter.bytesPerSecond - 1000) < 100)
    }

    @Test func stallDecaysAsSamplesArrive() {
        var meter = SpeedMeter(window: 5)
        for tick in 0...50 { meter.record(totalBytes: Int64(tick) * 10_000, at: Double(tick) * 0.1) }
        let before = meter.bytesPerSecond
        for tick in 1...30 { meter.record(totalBytes: 500_000, at: 5 + Double(tick) * 0.1) }
        #expect(meter.bytesPerSecond < before)
        for tick in 31...80 { meter.record(totalBytes: 500_000, at: 5 + Double(tick) * 0.1) }
        #expect(meter.bytesPerSecond == 0)
        #expect(meter.eta(remaining: 10) == nil)
    }

    @Test func restartResetsTheMeter() {
        var meter = SpeedMeter()
        meter.record(totalBytes: 0, at: 0)
        meter.record(totalBytes: 5000, at: 1)
        #expect(meter.bytesPerSecond == 5000)
        meter.record(totalBytes: 100, at: 2)    // fewer bytes: the transfer restarted
        #expect(meter.bytesPerSecond == 0)
        meter.record(totalBytes: 300, at: 3)
        #expect(meter.bytesPerSecond == 200)
        meter.record(totalBytes: 400, at: 1)    // time went backwards
        #expect(meter.bytesPerSecond == 0)
    }

    @Test func frequentSamplesKeepMemoryBoundedAndAnswerStable() {
        var meter = SpeedMeter(window: 5)
        for i in 0..<200_000 { meter.record(totalBytes: Int64(i) * 50, at: Double(i) / 10_000) }  // 500 kB/s
        #expect(abs(meter.bytesPerSecond - 500_000) < 1)
    }

    @Test func eta() {
        var meter = SpeedMeter()
        meter.record(totalBytes: 0, at: 0)
        meter.record(totalBytes: 1000, at: 1)
        #expect(meter.eta(remaining: nil) == nil)
        #expect(meter.eta(remaining: 0) == 0)
        #expect(meter.eta(remaining: -5) == 0)
        #expect(meter.eta(remaining: 3000) == 3)
    }
}
