import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// The speed limit over all transfers together (`globalMaxBytesPerSecond`, `--max-bytes-per-second`): it holds within
/// 10% over every 2-second window with several transfers at once, a transfer's own limit still applies within it, and
/// `setGlobalMaxBytesPerSecond` changes it for transfers already running.
@Suite("Global speed limit", .serialized)
struct GlobalRateLimitTests {
    /// The bytes all of `ids` had received, sampled every `step` seconds over the time every one of them was
    /// reporting: each job's progress samples interpolated linearly, then summed.
    static func combined(_ recorder: EventRecorder, _ ids: [String], step: Double = 0.05) -> [(time: Double, bytes: Int64)] {
        let series = ids.map { recorder.progressSamples(for: $0) }
        guard series.allSatisfy({ $0.count >= 2 }),
              let start = series.map({ $0[0].time }).max(), let end = series.map({ $0[$0.count - 1].time }).min(),
              end > start else { return [] }
        func bytes(_ samples: [(time: Double, bytes: Int64)], at time: Double) -> Double {
            guard let after = samples.firstIndex(where: { $0.time >= time }) else { return Double(samples[samples.count - 1].bytes) }
            guard after > 0 else { return Double(samples[0].bytes) }
            let (a, b) = (samples[after - 1], samples[after])
            let fraction = b.time > a.time ? (time - a.time) / (b.time - a.time) : 1
            return Double(a.bytes) + fraction * Double(b.bytes - a.bytes)
        }
        return stride(from: start, through: end, by: step).map { time in
            (time, Int64(series.reduce(0) { $0 + bytes($1, at: time) }))
        }
    }

    /// The highest rate over any `window` seconds starting at least `after` seconds past the first sample.
    static func fastestWindow(_ samples: [(time: Double, bytes: Int64)], after: Double, window: Double) -> Double {
        guard let first = samples.first else { return 0 }
        var fastest = 0.0
        for (index, start) in samples.enumerated() where start.time - first.time >= after {
            guard let end = samples[(index + 1)...].first(where: { $0.time - start.time >= window }) else { break }
            fastest = max(fastest, Double(end.bytes - start.bytes) / (end.time - start.time))
        }
        return fastest
    }

    /// Only the samples from `from` seconds to `to` seconds after the first one, times kept.
    static func slice(_ samples: [(time: Double, bytes: Int64)], from: Double, to: Double) -> [(time: Double, bytes: Int64)] {
        guard let first = samples.first?.time else { return [] }
        return samples.filter { $0.time - first >= from && $0.time - first <= to }
    }

    /// When the test process's threads waited to run while `ids` downloaded (`RateCheck.frozen`): windows with more
    /// of it than the limiter makes up are not judged on the low side.
    static func frozen(_ recorder: EventRecorder, _ ids: [String], _ probe: SchedulingProbe) -> [ClosedRange<Double>] {
        RateCheck.frozen(ids.map { recorder.progressSamples(for: $0) }, probe: probe)
    }

    /// Bytes received by `ids` so far: a finished transfer's whole file, else its last progress.
    private func received(_ recorder: EventRecorder, _ ids: [String]) -> Int64 {
        ids.reduce(0) { sum, id in
            if let file = recorder.events(for: id).compactMap(\.finishedFile).first { return sum + file.size }
            return sum + (recorder.progressSamples(for: id).last?.bytes ?? 0)
        }
    }

    @Test(arguments: [2, 3])
    func theLimitHoldsOverAllTransfersTogether(transfers: Int) async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let limit = 900_000
        let ids = (0..<transfers).map { "g\($0)" }
        for (index, _) in ids.enumerated() {
            try Fixture.writeFile(at: origin.root + "/g\(index).bin", size: 30_000_000, seed: 20 + index)
        }
        let probe = SchedulingProbe()
        defer { probe.stop() }
        try await EngineHarness.run({ $0.globalMaxBytesPerSecond = Int64(limit) }) { h in
            for (index, id) in ids.enumerated() {
                h.engine.submit(TransferSpec(id: id, url: origin.url("/g\(index).bin"), connections: index == 0 ? 4 : 1))
            }
            try await Task.sleep(nanoseconds: 6_500_000_000)
            for id in ids { h.engine.cancel(id: id) }
            let total = Self.combined(h.recorder, ids)
            let problems = RateCheck.problems(total, limit: Double(limit), after: 1, window: 2, tolerance: 0.1, maxStall: 1,
                                              frozen: Self.frozen(h.recorder, ids, probe))
            let start = total.first?.time ?? 0
            let late = probe.lateSpans(longerThan: 0.05).map {
                String(format: "%.0f ms at %.2f s", ($0.upperBound - $0.lowerBound) * 1000, $0.lowerBound - start)
            }
            #expect(problems.isEmpty, "\(transfers) transfers: \(problems.prefix(5)); \(probe.summary()): \(late)")
            #expect(total.count >= 80, "only \(total.count) combined samples")
            // The shared bucket is not divided evenly between transfers (a transfer with more connections takes more;
            // one may get little for a while), so only the total is checked.
        }
    }

    @Test func aTransfersOwnLimitStillAppliesWithinTheGlobalOne() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let probe = SchedulingProbe()
        defer { probe.stop() }
        try Fixture.writeFile(at: origin.root + "/own.bin", size: 30_000_000, seed: 30)
        try Fixture.writeFile(at: origin.root + "/free.bin", size: 30_000_000, seed: 31)
        try await EngineHarness.run({ $0.globalMaxBytesPerSecond = 1_000_000 }) { h in
            h.engine.submit(TransferSpec(id: "own", url: origin.url("/own.bin"), maxBytesPerSecond: 200_000, connections: 1))
            h.engine.submit(TransferSpec(id: "free", url: origin.url("/free.bin"), connections: 1))
            try await Task.sleep(nanoseconds: 6_000_000_000)
            for id in ["own", "free"] { h.engine.cancel(id: id) }
            // The job's own limit is a ceiling within the global one (which does not share itself out evenly, so the
            // job may get less than its own limit, at times nothing).
            let own = Self.fastestWindow(h.recorder.progressSamples(for: "own"), after: 1, window: 2)
            #expect(own <= 220_000, "the job's own limit: \(own.rounded()) B/s at most")
            let total = RateCheck.problems(Self.combined(h.recorder, ["own", "free"]), limit: 1_000_000, after: 1, window: 2,
                                           tolerance: 0.1, maxStall: 1, frozen: Self.frozen(h.recorder, ["own", "free"], probe))
            #expect(total.isEmpty, "the global limit: \(total.prefix(5))")
        }
    }

    /// Transfers that started with no limit (and so libcurl's full receive buffer) are held to one set later.
    @Test func aLimitSetLaterHoldsForTransfersStartedWithoutOne() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let probe = SchedulingProbe()
        defer { probe.stop() }
        let ids = ["u0", "u1", "u2"]
        for (index, _) in ids.enumerated() {
            try Fixture.writeFile(at: origin.root + "/u\(index).bin", size: 30_000_000, seed: 60 + index)
        }
        try await EngineHarness.run { h in
            for (index, id) in ids.enumerated() {
                h.engine.submit(TransferSpec(id: id, url: origin.url("/slow/u\(index).bin?rate=2000000"), connections: 1))
            }
            try await Task.sleep(nanoseconds: 2_000_000_000)
            h.engine.setGlobalMaxBytesPerSecond(1_500_000)
            try await Task.sleep(nanoseconds: 6_000_000_000)
            for id in ids { h.engine.cancel(id: id) }
            let total = Self.combined(h.recorder, ids)
            let limited = RateCheck.problems(Self.slice(total, from: 3, to: 8), limit: 1_500_000, after: 0, window: 2,
                                             tolerance: 0.1, maxStall: 1, frozen: Self.frozen(h.recorder, ids, probe))
            #expect(limited.isEmpty, "after the limit was set: \(limited.prefix(5))")
        }
    }

    @Test func changingTheLimitReachesRunningTransfers() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let probe = SchedulingProbe()
        defer { probe.stop() }
        let ids = ["c0", "c1", "c2"]
        for (index, _) in ids.enumerated() {
            try Fixture.writeFile(at: origin.root + "/c\(index).bin", size: 40_000_000, seed: 40 + index)
        }
        try await EngineHarness.run({ $0.globalMaxBytesPerSecond = 1_500_000 }) { h in
            for (index, id) in ids.enumerated() { h.engine.submit(TransferSpec(id: id, url: origin.url("/c\(index).bin"))) }
            try await Task.sleep(nanoseconds: 4_000_000_000)
            h.engine.setGlobalMaxBytesPerSecond(600_000)
            try await Task.sleep(nanoseconds: 4_500_000_000)
            let total = Self.combined(h.recorder, ids)
            let atClear = received(h.recorder, ids)
            h.engine.setGlobalMaxBytesPerSecond(nil)
            try await Task.sleep(nanoseconds: 1_500_000_000)
            let afterClear = received(h.recorder, ids)
            for id in ids { h.engine.cancel(id: id) }

            let frozen = Self.frozen(h.recorder, ids, probe)
            let before = RateCheck.problems(Self.slice(total, from: 0, to: 3.8), limit: 1_500_000, after: 1, window: 2,
                                            tolerance: 0.1, maxStall: 1, frozen: frozen)
            #expect(before.isEmpty, "before the change: \(before.prefix(5))")
            let after = RateCheck.problems(Self.slice(total, from: 4.5, to: 8.3), limit: 600_000, after: 0, window: 2,
                                           tolerance: 0.1, maxStall: 1, frozen: frozen)
            #expect(after.isEmpty, "after lowering it: \(after.prefix(5))")
            // Cleared: far more than the old limit's worth in the next 1.5 seconds.
            #expect(afterClear - atClear > 3_000_000, "after clearing it: \(afterClear - atClear) bytes in 1.5 s")
        }
    }
}
