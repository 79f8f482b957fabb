import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// A download that does not ask for a number of connections starts on one and adds more only while they raise the
/// total (`AdaptiveSplit`), against a real nginx: a capped origin ramps up, a fast one stays on one connection.
extension EngineIntegrationTests {
    @Test func adaptiveACappedOriginRampsUpToTheDefaultConnections() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 12 * Self.mib
        try Fixture.writeFile(at: origin.root + "/capped.bin", size: size, seed: 71)
        let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 71))
        let probe = SchedulingProbe()
        defer { probe.stop() }
        try await EngineHarness.run({ $0.adaptiveSettle = 0.5 }) { h in
            // 1 MiB/s per connection: one alone would take 12 s.
            let end = await h.download(TransferSpec(id: "cap", url: origin.url("/slow/capped.bin?rate=\(Self.mib)")), timeout: 40)
            probe.stop()
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == expected)
            #expect(try Fixture.sha256Hex(ofFile: file.path) == expected)
            let log = await Self.settledAccessLog(origin)
            let requests = log.filter { $0.path == "/slow/capped.bin" }
            // The first request (no range) and at least three connections that took over ranges, each validated.
            #expect(requests.count >= 4, "\(requests.map { $0.range ?? "-" })")
            #expect(requests.filter { $0.range != nil }.allSatisfy { $0.ifRange != nil && $0.status == 206 })
            // A connection cut short (the first, open-ended one; a range handed on) is closed as soon as the engine
            // reads past its new end; while this process cannot run (a busy machine), the origin goes on sending
            // into every connection's socket buffers at the capped rate, and what lies past the end counts as sent.
            // Twice in loaded runs 2.5 MiB beyond the size, exactly: whole bursts of nginx's rate limiter.
            let frozen = probe.lateSpans(longerThan: 0.02).reduce(0.0) { $0 + ($1.upperBound - $1.lowerBound) }
            let allowance = Int64(2 * Self.mib) + Int64(frozen * Double(4 * Self.mib))
            #expect(requests.reduce(0) { $0 + $1.bytesSent } < Int64(size) + allowance,
                    "little fetched twice (allowance \(allowance) bytes; \(probe.summary())): \(requests.map { "\($0.range ?? "-") \($0.status) \($0.bytesSent)" })")
        }
    }

    @Test func adaptiveAFastOriginKeepsOneConnection() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 24 * Self.mib
        try Fixture.writeFile(at: origin.root + "/fast.bin", size: size, seed: 72)
        // A low bar for "fast enough" (4 MiB/s) so that a loaded test machine still clears it: nginx serves the
        // file from the page cache far faster, so the ramp ends on one connection after its first 0.3 s.
        try await EngineHarness.run({ $0.adaptiveSettle = 0.3; $0.adaptiveFastEnough = 4 * Double(Self.mib) }) { h in
            let end = await h.download(TransferSpec(id: "fast", url: origin.url("/fast.bin")), timeout: 40)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 72)))
            let log = await Self.settledAccessLog(origin)
            #expect(log.filter { $0.path == "/fast.bin" }.map(\.range) == [nil], "one plain request")
        }
    }

    @Test func adaptiveAnExplicitNumberOfConnectionsSplitsAtOnce() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 12 * Self.mib
        try Fixture.writeFile(at: origin.root + "/asked.bin", size: size, seed: 73)
        try await EngineHarness.run({ $0.adaptiveSettle = 60 }) { h in
            // The ramp would wait a minute; asking for four connections does not wait for it.
            let end = await h.download(TransferSpec(id: "asked", url: origin.url("/slow/asked.bin?rate=\(4 * Self.mib)"), connections: 4),
                                       timeout: 40)
            #expect(end?.finishedFile != nil, "\(String(describing: end))")
            let log = await Self.settledAccessLog(origin)
            #expect(log.filter { $0.path == "/slow/asked.bin" }.count == 4)
        }
    }
}
