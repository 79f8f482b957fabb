import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// Segmented (multi-connection) downloads against a real nginx and the fault origin. Every successful download
/// is checked by SHA-256, both the engine's digest and the file's.
extension EngineIntegrationTests {
    static let mib = 1 << 20

    /// (first, last) of `bytes=first-last`; `last` is nil for `bytes=first-`.
    static func bounds(_ range: String?) -> (first: Int64, last: Int64?)? {
        guard let range, range.hasPrefix("bytes=") else { return nil }
        let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]) else { return nil }
        return (first, parts[1].isEmpty ? nil : Int64(parts[1]))
    }

    static func validators(_ metadata: TransferMetadata) -> ResumeValidators {
        ResumeValidators(etag: metadata.etag, lastModified: metadata.lastModified, bytesExpected: metadata.bytesExpected,
                         finalURL: metadata.finalURL)
    }

    static func isPaused(_ event: TransferEvent) -> Bool {
        if case .paused = event { return true }
        return false
    }

    /// Checks that every range the sidecar claims written holds the file's bytes (by digest); returns the claim.
    @discardableResult
    static func expectClaimsHold(_ sidecar: SegmentSidecar, partial: Data, content: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Int64 {
        for segment in sidecar.table.segments where segment.next > segment.start {
            let range = Int(segment.start)..<Int(segment.next)
            let actual = Fixture.sha256Hex(of: Array(partial[range]))
            let expected = Fixture.sha256Hex(of: Array(content[range]))
            #expect(actual == expected, "bytes \(range) claimed written do not hold the file's bytes", sourceLocation: sourceLocation)
        }
        return sidecar.table.bytesWritten
    }

    /// The access log once no line was added for half a second (nginx logs a request when it ends, and notices a
    /// closed connection only at its next write).
    static func settledAccessLog(_ origin: NginxOrigin) async -> [NginxLogEntry] {
        var last = origin.accessLog()
        for _ in 0..<20 {
            try? await Task.sleep(nanoseconds: 500_000_000)
            let now = origin.accessLog()
            if now.count == last.count { return now }
            last = now
        }
        return last
    }

    /// Waits until the job has received `bytes`.
    static func waitForProgress(_ h: EngineHarness, _ id: String, beyond bytes: Int, timeout: Double = 20) async -> Bool {
        await h.recorder.wait(timeout: timeout) { events in
            events.contains { $0.id == id && ($0.progress?.bytesReceived ?? 0) > Int64(bytes) }
        }
    }

    // MARK: splitting

    @Test(arguments: [4, 16])
    func segmentedDownloadSplitsTheFileIntoRangedRequests(connections: Int) async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 32 * Self.mib
        try Fixture.writeFile(at: origin.root + "/seg.bin", size: size, seed: 40)
        let expected = try Fixture.sha256Hex(ofFile: origin.root + "/seg.bin")
        try await EngineHarness.run({ $0.maxPerHost = 16 }) { h in
            let end = await h.download(TransferSpec(id: "sg", url: origin.url("/seg.bin"), connections: connections), timeout: 60)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.size == Int64(size))
            #expect(file.sha256 == expected)
            #expect(try Fixture.sha256Hex(ofFile: file.path) == expected)
            #expect(h.partialSize("sg") == nil)
            #expect(!FileManager.default.fileExists(atPath: h.spool.segmentsPath(for: "sg")))

            let events = h.recorder.events(for: "sg")
            let metadata = try #require(events.compactMap(\.metadata).first)
            #expect(events.compactMap(\.metadata).count == 1)
            let progress = events.compactMap(\.progress)
            #expect(progress.allSatisfy { $0.bytesExpected == Int64(size) })
            #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived })
            #expect(!events.contains { $0.isRestarted })

            // One plain GET (the first request; nginx logs requests as they end); every other one asks for an
            // exact range with If-Range.
            let log = await origin.accessLog(count: connections).filter { $0.path == "/seg.bin" }
            #expect(log.filter { $0.range == nil }.count == 1, "\(log)")
            let ranged = log.filter { $0.range != nil }
            #expect(ranged.count >= connections - 1, "\(log)")
            for entry in ranged {
                #expect(entry.status == 206)
                #expect(entry.ifRange == metadata.etag)
                let bounds = try #require(Self.bounds(entry.range))
                #expect(bounds.last != nil, "open-ended segment request \(entry.range ?? "")")
            }
            let planned = Set((1..<connections).map { Int64($0 * (size / connections)) })
            #expect(planned.isSubset(of: Set(ranged.compactMap { Self.bounds($0.range)?.first })))
        }
    }

    /// nginx limits each connection (`limit_rate`), so more connections are measurably faster.
    @Test func segmentsBeatAPerConnectionRateLimit() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 6 * Self.mib
        try Fixture.writeFile(at: origin.root + "/rl.bin", size: size, seed: 42)
        let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 42))
        try await EngineHarness.run { h in
            var elapsed: [Int: Double] = [:]
            for connections in [1, 4] {
                let began = Date()
                let end = await h.download(TransferSpec(
                    id: "rl\(connections)", url: origin.url("/slow/rl.bin?rate=\(2 * Self.mib)"),
                    filename: "rl\(connections).bin", connections: connections), timeout: 30)
                elapsed[connections] = Date().timeIntervalSince(began)
                let file = try #require(end?.finishedFile, "\(String(describing: end))")
                #expect(file.sha256 == expected)
                #expect(try Fixture.sha256Hex(ofFile: file.path) == expected)
            }
            print("6 MiB at 2 MiB/s per connection: 1 connection \(elapsed[1]!) s, 4 connections \(elapsed[4]!) s")
            #expect(elapsed[4]! < elapsed[1]! * 0.6)
            let ranged = await origin.accessLog(count: 5).filter { $0.range != nil }
            #expect(ranged.count >= 3)
        }
    }

    @Test func aFreeConnectionTakesOverHalfOfTheSlowestSegment() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        let size = 8 * Self.mib
        let slowStart = 2 * Self.mib  // the second of four segments is served at 512 KiB/s
        try await EngineHarness.run({ $0.minimumSegmentSize = 256 << 10 }) { h in
            let url = origin.url("/f/steal.bin?size=\(size)&seed=43&fault_start=\(slowStart)&rate=\(512 << 10)")
            let began = Date()
            let end = await h.download(TransferSpec(id: "ws", url: url, connections: 4), timeout: 30)
            let elapsed = Date().timeIntervalSince(began)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Self.sha(size, 43))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            let requests = await origin.requests()
            #expect(requests.count > 4, "\(requests.map(\.range))")
            let starts = requests.compactMap { Self.bounds($0.range)?.first }
            // Parts of the slow segment were fetched by other connections.
            #expect(starts.contains { $0 > Int64(slowStart) && $0 < Int64(2 * slowStart) }, "\(starts)")
            #expect(requests.filter { $0.range != nil }.allSatisfy { $0.ifRange == "\"s43-\(size)\"" })
            // Alone, the slow segment would take 4 s (not asserted: timing on a loaded 2-core machine varies).
            print("8 MiB with one slow segment: \(String(format: "%.2f", elapsed)) s, \(requests.count) requests")
        }
    }

    // MARK: pause, restart, crash

    @Test func pauseAndResumeContinueEverySegment() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 32 * Self.mib
        try Fixture.writeFile(at: origin.root + "/pr.bin", size: size, seed: 44)
        let content = Fixture.content(size: size, seed: 44)
        let expected = Fixture.sha256Hex(of: content)
        try await EngineHarness.run { h in
            h.engine.submit(TransferSpec(id: "pr", url: origin.url("/slow/pr.bin?rate=\(2 * Self.mib)"), connections: 4))
            #expect(await Self.waitForProgress(h, "pr", beyond: 12 * Self.mib))
            h.engine.pause(id: "pr")
            #expect(await h.recorder.wait { $0.contains(where: Self.isPaused) })
            guard case .paused(_, let onDisk)? = h.recorder.events(for: "pr").last else {
                Issue.record("no paused event: \(h.recorder.events(for: "pr"))")
                return
            }
            // The file is preallocated; the sidecar says which bytes are there, and they are the file's.
            #expect(h.partialSize("pr") == Int64(size))
            let text = try String(contentsOfFile: h.spool.segmentsPath(for: "pr"), encoding: .utf8)
            let sidecar = try #require(SegmentSidecar.decode(text))
            let partial = try Data(contentsOf: URL(fileURLWithPath: h.spool.partialPath(for: "pr")))
            #expect(Self.expectClaimsHold(sidecar, partial: partial, content: content) == onDisk)
            #expect(h.spool.partialSize(jobID: "pr") == onDisk)
            #expect(onDisk > 12 * Int64(Self.mib) && onDisk < Int64(size))
            let metadata = try #require(h.recorder.events(for: "pr").compactMap(\.metadata).last)
            #expect(sidecar.validator == metadata.etag)
            let incomplete = sidecar.table.segments.filter { !$0.isComplete }
            #expect(incomplete.count >= 2)

            let resumedURL = "/slow/pr.bin?rate=\(4 * Self.mib)"
            let resumed = TransferSpec(id: "pr", url: origin.url(resumedURL), connections: 4, resume: Self.validators(metadata))
            let end = await h.download(resumed, timeout: 60)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == expected)
            #expect(try Fixture.sha256Hex(ofFile: file.path) == expected)
            #expect(!h.recorder.events(for: "pr").contains { $0.isRestarted })
            #expect(h.recorder.events(for: "pr").contains { if case .started(_, let offset) = $0 { offset == onDisk } else { false } })

            let log = await Self.settledAccessLog(origin)
            let after = log.filter { $0.target == resumedURL }
            #expect(after.count >= incomplete.count)
            #expect(after.allSatisfy { $0.status == 206 && $0.ifRange == metadata.etag })
            // Every incomplete segment continues exactly where it stopped.
            let starts = Set(after.compactMap { Self.bounds($0.range)?.first })
            for segment in incomplete { #expect(starts.contains(segment.next), "no request from \(segment.next): \(starts)") }
            #expect(!after.contains { entry in
                sidecar.table.segments.contains { ($0.start..<$0.next).contains(Self.bounds(entry.range)?.first ?? -1) }
            }, "a request asked again for bytes already written")
            let fetched = log.reduce(Int64(0)) { $0 + $1.bytesSent }
            print("32 MiB paused at \(onDisk) and resumed: \(fetched) bytes fetched in \(log.count) requests")
            for entry in log { print("  \(entry.target) \(entry.status) \(entry.range ?? "-") sent \(entry.bytesSent)") }
            print("  sidecar at pause: \(sidecar.table.segments.map { "\($0.start)-\($0.end)@\($0.next)" })")
            #expect(Double(fetched) <= 1.05 * Double(size))
        }
    }

    @Test func aFreshEngineContinuesFromTheSidecar() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 24 * Self.mib
        try Fixture.writeFile(at: origin.root + "/rs.bin", size: size, seed: 45)
        let content = Fixture.content(size: size, seed: 45)
        let first = try EngineHarness.make()
        first.engine.submit(TransferSpec(id: "rs", url: origin.url("/slow/rs.bin?rate=\(2 * Self.mib)"), connections: 4))
        let moving = await Self.waitForProgress(first, "rs", beyond: 9 * Self.mib)
        await first.engine.shutdown()
        #expect(moving)
        guard case .stopped(_, let onDisk)? = first.recorder.events(for: "rs").last,
              let metadata = first.recorder.events(for: "rs").compactMap(\.metadata).last else {
            Issue.record("no stopped event: \(first.recorder.events(for: "rs"))")
            Fixture.removeTree(first.root)
            return
        }
        let second = try first.reopen()
        do {
            let sidecar = try #require(second.spool.segmentState(jobID: "rs"))
            #expect(sidecar.table.bytesWritten == onDisk)
            #expect(second.spool.partialSize(jobID: "rs") == onDisk)
            let end = await second.download(
                TransferSpec(id: "rs", url: origin.url("/rs.bin"), connections: 4, resume: Self.validators(metadata)), timeout: 60)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Fixture.sha256Hex(of: content))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            #expect(second.recorder.events(for: "rs").first.map { if case .started(_, onDisk) = $0 { true } else { false } } == true)
            let after = await origin.accessLog(count: 5).filter { $0.target == "/rs.bin" }
            let starts = Set(after.compactMap { Self.bounds($0.range)?.first })
            for segment in sidecar.table.segments where !segment.isComplete {
                #expect(starts.contains(segment.next), "no request from \(segment.next): \(starts)")
            }
            #expect(after.allSatisfy { $0.status == 206 && $0.ifRange == metadata.etag })
        } catch {
            await second.close()
            throw error
        }
        await second.close()
    }

    /// A crash (kill -9) may come at any moment: whatever the sidecar says at that moment must already be in the
    /// file, and a new engine over that state must produce the right file.
    @Test func theSidecarNeverClaimsBytesNotWritten() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 8 * Self.mib
        try Fixture.writeFile(at: origin.root + "/cs.bin", size: size, seed: 46)
        let content = Fixture.content(size: size, seed: 46)
        let crashed = try Fixture.tempDirectory("ferry-crash-test")
        defer { Fixture.removeTree(crashed) }
        var metadata: TransferMetadata?
        try await EngineHarness.run({ $0.segmentStateInterval = 0.1 }) { h in
            // 4 connections at 256 KiB/s each: about 8 s for the file; sampled for about 1.5 s.
            h.engine.submit(TransferSpec(id: "cs", url: origin.url("/slow/cs.bin?rate=\(256 << 10)"), connections: 4))
            #expect(await Self.waitForProgress(h, "cs", beyond: 3 * Self.mib / 2))
            var claims: [Int64] = []
            for _ in 0..<6 where !h.recorder.events(for: "cs").contains(where: \.isEnd) {
                // The sidecar first, then the file: what a crash at this moment would leave.
                guard let text = AtomicFile.read(h.spool.segmentsPath(for: "cs")), let sidecar = SegmentSidecar.decode(text) else {
                    Issue.record("no readable sidecar while running")
                    return
                }
                let partial = try Data(contentsOf: URL(fileURLWithPath: h.spool.partialPath(for: "cs")))
                claims.append(Self.expectClaimsHold(sidecar, partial: partial, content: content))
                try FileManager.default.createDirectory(atPath: crashed + "/spool/partial", withIntermediateDirectories: true)
                try? FileManager.default.removeItem(atPath: crashed + "/spool/partial/cs.part")
                try partial.write(to: URL(fileURLWithPath: crashed + "/spool/partial/cs.part"))
                try text.write(toFile: crashed + "/spool/partial/cs.segments", atomically: true, encoding: .utf8)
                try await Task.sleep(nanoseconds: 250_000_000)
            }
            #expect(claims.count >= 3 && claims.last! > claims.first!, "the sidecar was not saved while running: \(claims)")
            metadata = h.recorder.events(for: "cs").compactMap(\.metadata).last
            h.engine.cancel(id: "cs")
        }
        let spool = try Spool(root: crashed + "/spool")
        let recorder = EventRecorder()
        let engine = DownloadEngine(configuration: EngineHarness.configuration(), spool: spool,
                                    logger: .init(label: "ferry.engine.test"), onEvent: { recorder.record($0) })
        let resume = try Self.validators(#require(metadata))
        engine.submit(TransferSpec(id: "cs", url: origin.url("/cs.bin"), connections: 4, resume: resume))
        let end = await recorder.end(of: "cs", timeout: 60)
        await engine.shutdown()
        let file = try #require(end?.finishedFile, "\(String(describing: end))")
        #expect(file.sha256 == Fixture.sha256Hex(of: content))
        #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
        #expect(!recorder.events(for: "cs").contains { $0.isRestarted })
    }

    @Test func aChangedETagBetweenPauseAndResumeStartsOverWithTheNewFile() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 16 * Self.mib
        let path = origin.root + "/ec.bin"
        try Fixture.writeFile(at: path, size: size, seed: 47)
        try await EngineHarness.run { h in
            h.engine.submit(TransferSpec(id: "ec", url: origin.url("/slow/ec.bin?rate=\(Self.mib)"), connections: 4))
            #expect(await Self.waitForProgress(h, "ec", beyond: 5 * Self.mib))
            h.engine.pause(id: "ec")
            #expect(await h.recorder.wait { $0.contains(where: Self.isPaused) })
            let metadata = try #require(h.recorder.events(for: "ec").compactMap(\.metadata).last)
            // A new version of the file: other bytes, another modification time, so another ETag.
            try Fixture.writeFile(at: path, size: size, seed: 48)
            try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(100)], ofItemAtPath: path)

            let end = await h.download(TransferSpec(id: "ec", url: origin.url("/ec.bin"), connections: 4, resume: Self.validators(metadata)), timeout: 60)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 48)))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            #expect(file.etag != metadata.etag)
            let events = h.recorder.events(for: "ec")
            let paused = try #require(events.lastIndex(where: Self.isPaused))
            #expect(events[paused...].contains { $0.isRestarted })
            // The resumed segment requests carried the old ETag and got the whole (new) file.
            let after = await origin.accessLog(count: 6).filter { $0.target == "/ec.bin" }
            #expect(after.contains { $0.range != nil && $0.ifRange == metadata.etag && $0.status == 200 })
        }
    }

    // MARK: falling back to one connection

    @Test func withoutRangesOrLengthOneConnectionIsUsed() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        let size = 9 * Self.mib
        try await EngineHarness.run { h in
            for (id, query) in [("nr", "accept_ranges="), ("nl", "no_length=1")] {
                await origin.reset()
                let url = origin.url("/f/\(id).bin?size=\(size)&seed=49&\(query)")
                let end = await h.download(TransferSpec(id: id, url: url, connections: 4), timeout: 30)
                let file = try #require(end?.finishedFile, "\(id): \(String(describing: end))")
                #expect(file.sha256 == Self.sha(size, 49))
                #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
                let requests = await origin.requests()
                #expect(requests.count == 1, "\(id): \(requests.map(\.range))")
                #expect(requests.first?.range == nil)
            }
        }
    }

    /// An origin that says `Accept-Ranges: bytes` but answers ranges with the whole file.
    @Test func anOriginIgnoringRangesEndsWithOneConnection() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        let size = 4 * Self.mib
        try await EngineHarness.run { h in
            let url = origin.url("/f/liar.bin?size=\(size)&seed=50&ignore_range=1")
            let end = await h.download(TransferSpec(id: "li", url: url, connections: 4), timeout: 30)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Self.sha(size, 50))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            #expect(h.recorder.events(for: "li").filter(\.isRestarted).count == 1)
            // The first GET, some segment requests answered 200 (and dropped), then one GET for the whole file.
            let requests = await origin.requests()
            #expect(requests.first?.range == nil)
            #expect(requests.filter { $0.range == nil }.count == 2, "\(requests.map(\.range))")
            #expect(requests.count <= 5, "\(requests.map(\.range))")
        }
    }

    // MARK: failures

    @Test func aSegmentWhoseConnectionResetsIsRetriedAlone() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        let size = 8 * Self.mib
        let dropped = 4 * Self.mib  // the third of four segments is reset after 300,000 bytes, once
        try await EngineHarness.run { h in
            let url = origin.url("/f/drop.bin?size=\(size)&seed=51&fault_start=\(dropped)&drop_after=300000&fail_times=1")
            let end = await h.download(TransferSpec(id: "dr", url: url, connections: 4), timeout: 30)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Self.sha(size, 51))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            let requests = await origin.requests()
            let starts = requests.compactMap { Self.bounds($0.range)?.first }
            #expect(starts.filter { $0 == Int64(dropped) }.count == 1)
            let retried = try #require(requests.first { Self.bounds($0.range)?.first == Int64(dropped + 300_000) }, "\(starts)")
            #expect(retried.ifRange == "\"s51-\(size)\"")
            // The other segments were not disturbed: each asked for once, no restart, one start.
            for other in [2 * Self.mib, 6 * Self.mib] { #expect(starts.filter { $0 == Int64(other) }.count == 1) }
            let events = h.recorder.events(for: "dr")
            #expect(!events.contains { $0.isRestarted })
            #expect(events.filter(\.isStarted).count == 1)
        }
    }

    @Test func segmentedChecksumMismatchFailsAndKeepsNothing() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        try Fixture.writeFile(at: origin.root + "/cm.bin", size: 9 * Self.mib, seed: 52)
        try await EngineHarness.run { h in
            let wrong = String(repeating: "1", count: 64)
            let end = await h.download(TransferSpec(id: "scm", url: origin.url("/cm.bin"), checksum: try Checksum(algorithm: .sha256, value: wrong), connections: 4))
            let failure = try #require(end?.failure, "\(String(describing: end))")
            #expect(failure.code == .checksumMismatch)
            #expect(h.finishedNames().isEmpty)
            await h.recorder.wait(timeout: 2) { _ in h.partialSize("scm") == nil }
            #expect(h.partialSize("scm") == nil)
            #expect(!FileManager.default.fileExists(atPath: h.spool.segmentsPath(for: "scm")))
            await #expect(origin.accessLog(count: 4).filter { $0.range != nil }.count >= 3)
        }
    }

    // MARK: limits

    @Test func segmentsCountAgainstThePerHostCap() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 16 * Self.mib
        try Fixture.writeFile(at: origin.root + "/cap.bin", size: size, seed: 53)
        try Fixture.writeFile(at: origin.root + "/other.bin", size: 100_000, seed: 54)
        try await EngineHarness.run({ $0.maxPerHost = 3 }) { h in
            h.engine.submit(TransferSpec(id: "cap", url: origin.url("/slow/cap.bin?rate=\(4 * Self.mib)"), connections: 8))
            var peak = 0
            var samples: [Int] = []
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, !h.recorder.all.contains(where: \.isEnd) {
                let count = await h.engine.connectionCount(host: "127.0.0.1")
                samples.append(count)
                peak = max(peak, count)
                if samples.count == 20 {
                    // A second transfer to the host waits for a connection instead of exceeding the cap.
                    h.engine.submit(TransferSpec(id: "other", url: origin.url("/other.bin"), sequence: 1))
                }
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            let end = await h.recorder.end(of: "cap")
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 53)))
            #expect(peak == 3, "connections sampled: \(samples)")
            let other = await h.recorder.end(of: "other")
            #expect(try Fixture.sha256Hex(ofFile: #require(other?.finishedFile).path) == Self.sha(100_000, 54))
        }
    }

    @Test func theSpeedLimitAppliesToTheWholeJob() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        // 12 MB at 4 MB/s is 3 s. libcurl limits each connection separately and drains what a socket holds (up to
        // 100 receive buffers) before it checks, so each new connection may burst: small buffers keep that small.
        let size = 12_000_000
        try Fixture.writeFile(at: origin.root + "/lim.bin", size: size, seed: 55)
        try await EngineHarness.run({ $0.receiveBufferSize = 4 << 10 }) { h in
            let began = Date()
            let end = await h.download(TransferSpec(id: "lim", url: origin.url("/lim.bin"), maxBytesPerSecond: 4_000_000, connections: 4))
            let elapsed = Date().timeIntervalSince(began)
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 55)))
            await #expect(origin.accessLog(count: 4).filter { $0.range != nil }.count >= 3)
            print("12 MB at 4 MB/s over 4 connections: \(String(format: "%.2f", elapsed)) s")
            #expect(elapsed > 2.2, "12 MB at 4 MB/s took \(elapsed) s")
            #expect(elapsed < 15)
        }
    }
    /// A speed limit pauses connections; the one whose segment ends inside a chunk libcurl held back is cut when that
    /// chunk is handed over on the wake-up. libcurl 7.88 reports the refusal from `curl_easy_pause` without ending
    /// the transfer, so the job sat at 100% until an old timer of the handle fired (the connect timeout) or for good
    /// (issue 30). With a 60 s connect timeout, 8 MB at 4 MB/s must end within seconds of its last byte.
    @Test func aRateLimitedSplitDownloadFinishesAsItsLastByteArrives() async throws {
        let origin = try await NginxOrigin.start()
        defer { origin.stop() }
        let size = 8_000_000
        try Fixture.writeFile(at: origin.root + "/capped.bin", size: size, seed: 56)
        try await EngineHarness.run({ $0.connectTimeout = 60 }) { h in
            for round in 0..<2 {
                let began = Date()
                let end = await h.download(TransferSpec(id: "capped-\(round)", url: origin.url("/capped.bin"),
                                                        maxBytesPerSecond: 4_000_000, connections: 2), timeout: 40)
                let elapsed = Date().timeIntervalSince(began)
                let file = try #require(end?.finishedFile, "round \(round): \(String(describing: end)) after \(elapsed) s")
                #expect(try Fixture.sha256Hex(ofFile: file.path) == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 56)))
                #expect(elapsed > 1.5, "8 MB at 4 MB/s took \(elapsed) s")
                #expect(elapsed < 12, "8 MB at 4 MB/s ended \(elapsed) s after it started: it sat at 100%")
            }
        }
    }
}
