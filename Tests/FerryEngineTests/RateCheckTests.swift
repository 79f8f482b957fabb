import FerryTestSupport
import Testing

/// `RateCheck`, the judge of the rate tests, on made-up samples: what a freeze of the process excuses and what it
/// never does.
@Suite struct RateCheckTests {
    /// Samples every 0.05 s over `seconds` at `rate`, with nothing received from `pause` for `length` seconds.
    static func samples(rate: Double, seconds: Double, pause: Double, length: Double) -> [(time: Double, bytes: Int64)] {
        var bytes = 0.0, result: [(time: Double, bytes: Int64)] = []
        for step in 0...Int(seconds / 0.05) {
            let time = Double(step) * 0.05
            if step > 0, !(time > pause && time <= pause + length) { bytes += rate * 0.05 }
            result.append((time, Int64(bytes)))
        }
        return result
    }

    @Test func aPauseIsSlowUnlessTheProcessWasFrozenThen() {
        let samples = Self.samples(rate: 1_000_000, seconds: 6, pause: 3, length: 0.5)
        let judged = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1)
        #expect(!judged.isEmpty, "a half-second pause is 25% slow over 2 s")
        let excused = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                         frozen: [3.0...3.5])
        #expect(excused.isEmpty, "\(excused)")
        let tooLittle = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                           frozen: [3.0...3.05])
        #expect(!tooLittle.isEmpty, "a freeze shorter than the make-up does not excuse a half-second pause")
        let partly = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                        frozen: [3.0...3.25])
        #expect(!partly.isEmpty, "a quarter-second freeze does not excuse a half-second pause")
    }

    @Test func aFreezeNeverExcusesTooFast() {
        let samples = Self.samples(rate: 1_300_000, seconds: 6, pause: 10, length: 0)
        let problems = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                          frozen: [0...6])
        #expect(problems.contains { $0.contains("B/s from") }, "\(problems)")
    }

    /// A process frozen at times, a little each time: each window asks less, by its frozen time beyond the make-up.
    @Test func scatteredFreezesLowerWhatEachWindowAsks() {
        var samples: [(time: Double, bytes: Int64)] = []
        var frozen: [ClosedRange<Double>] = []
        var bytes: Int64 = 0
        for step in 0...120 {
            let time = Double(step) * 0.05
            if step % 10 == 3 { frozen.append(time - 0.05...time) } else if step > 0 { bytes += 50_000 }
            samples.append((time, bytes))
        }
        // 0.9 MB/s at 1 MB/s asked, 0.2 s of every 2 s frozen: 0.1 s beyond the make-up excuses 5%.
        let excused = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                         frozen: frozen)
        #expect(excused.isEmpty, "\(excused)")
        let slower = samples.map { ($0.time, $0.bytes * 8 / 10) }
        let slow = RateCheck.problems(slower, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                      frozen: frozen)
        #expect(!slow.isEmpty, "0.72 MB/s is too slow for what the freezes excuse")
    }

    /// The probe behind the rate tests' `frozen` spans fires about every period while it runs (at most twice a period:
    /// a late firing is followed by one at once), and not after `stop`. The time is measured, not assumed: on a busy
    /// machine this test's 0.5 s sleep can last seconds.
    @Test func theSchedulingProbeFiresEveryPeriodUntilStopped() async throws {
        let began = SchedulingProbe.now()
        let probe = SchedulingProbe(period: 0.01)
        try await Task.sleep(for: .milliseconds(500))
        probe.stop()
        let elapsed = SchedulingProbe.now() - began
        let fired = probe.wakeUps
        #expect(fired >= 10 && Double(fired) <= 2 * elapsed / 0.01 + 2, "\(fired) firings in \(elapsed) s")
        try await Task.sleep(for: .milliseconds(100))
        #expect(probe.wakeUps == fired)
    }

    @Test func aRunFrozenThroughoutCannotPass() {
        let samples = Self.samples(rate: 500_000, seconds: 6, pause: 10, length: 0)
        let problems = RateCheck.problems(samples, limit: 1_000_000, after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                          frozen: [0...6])
        #expect(problems.contains { $0.hasPrefix("only 0 of") }, "\(problems)")
    }
}
