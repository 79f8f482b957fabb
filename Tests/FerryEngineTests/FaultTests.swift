import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// Misbehaving origins (Tests/Fixtures/fault_origin.py): retries, resume rules, failures, redirects, names, limits.
extension EngineIntegrationTests {
    static func sha(_ size: Int, _ seed: Int) -> String { Fixture.sha256Hex(of: Fixture.content(size: size, seed: seed)) }

    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    @Test func connectionResetMidBodyRetriesWithARangeRequest() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let url = origin.url("/f/reset.bin?size=500000&seed=11&drop_after=100000&fail_times=1")
            let end = await h.download(TransferSpec(id: "cr", url: url))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Self.sha(500_000, 11))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            let requests = await origin.requests()
            #expect(requests.count == 2)
            #expect(requests.first?.range == nil)
            #expect(requests.last?.range == "bytes=100000-")
            #expect(requests.last?.ifRange == "\"s11-500000\"")
            let waits = h.recorder.events(for: "cr").filter { if case .waiting(_, .retrying) = $0 { true } else { false } }
            #expect(waits.count == 1)
            #expect(h.recorder.events(for: "cr").contains { if case .started(_, 100_000) = $0 { true } else { false } })
        }
    }

    /// libcurl's speed is averaged over a few seconds, so after a 50 kB burst a stall shows as "below 100 kB/s"
    /// within about half a second; with lowSpeedTime 1 the attempt times out about 1.5 s into the stall.
    @Test func stallTimesOutAndRetries() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run({ $0.lowSpeedTime = 1; $0.lowSpeedLimit = 100_000 }) { h in
            let url = origin.url("/f/stall.bin?size=80000&seed=12&stall_after=50000&stall_secs=4")
            let end = await h.download(TransferSpec(id: "st", url: url))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(80_000, 12))
            let failures = h.recorder.events(for: "st").compactMap { event -> JobFailure? in
                if case .waiting(_, .retrying(_, _, let failure)) = event { return failure }
                return nil
            }
            #expect(failures.first?.code == .timeout)
            await #expect(origin.requests().last?.range == "bytes=50000-")
        }
    }

    @Test func serviceUnavailableHonoursRetryAfter() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let url = origin.url("/f/busy.bin?size=30000&seed=13&status=503&retry_after=1&fail_times=1")
            let end = await h.download(TransferSpec(id: "su", url: url))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(30_000, 13))
            let requests = await origin.requests()
            #expect(requests.count == 2)
            if requests.count == 2 { #expect(requests[1].time - requests[0].time >= 0.9) }
            let failure = h.recorder.events(for: "su").compactMap { event -> JobFailure? in
                if case .waiting(_, .retrying(_, 1, let failure)) = event { return failure }
                return nil
            }.first
            #expect(failure?.code == .httpError)
            #expect(failure?.httpStatus == 503)
        }
    }

    @Test func tooManyRequestsIsRetried() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let url = origin.url("/f/limited.bin?size=20000&seed=14&status=429&fail_times=2")
            let end = await h.download(TransferSpec(id: "tm", url: url))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(20_000, 14))
            await #expect(origin.requests().count == 3)
        }
    }

    @Test func persistentServerErrorFailsAfterTheLastAttempt() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run({ $0.retry = RetryPolicy(maxAttempts: 3, baseDelay: 0.02, maxDelay: 0.05) }) { h in
            let end = await h.download(TransferSpec(id: "pe", url: origin.url("/f/down.bin?size=100&status=503")))
            let failure = try #require(end?.failure)
            #expect(failure.code == .httpError)
            #expect(failure.httpStatus == 503)
            await #expect(origin.requests().count == 3)
            #expect(h.finishedNames().isEmpty)
        }
    }

    @Test func notFoundFailsWithoutRetry() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let end = await h.download(TransferSpec(id: "nf", url: origin.url("/f/missing.bin?status=404")))
            let failure = try #require(end?.failure)
            #expect(failure.code == .httpError)
            #expect(failure.httpStatus == 404)
            await #expect(origin.requests().count == 1)
            #expect(h.finishedNames().isEmpty)
        }
    }

    @Test func shortBodyIsRetriedAndCompletedFromANewURL() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        // The origin always sends 1,000 bytes fewer than Content-Length on this URL: after the first failure the
        // job gets a fresh URL for the same file (same ETag), which it resumes from the bytes on disk.
        try await EngineHarness.run({ $0.retry = RetryPolicy(maxAttempts: 4, baseDelay: 0.3, maxDelay: 0.3) }) { h in
            h.engine.submit(TransferSpec(id: "sb", url: origin.url("/f/short.bin?size=60000&seed=15&short_by=1000")))
            let retrying = await h.recorder.wait { events in
                events.contains { if case .waiting(_, .retrying(_, _, let failure)) = $0 { failure.code == .networkError } else { false } }
            }
            #expect(retrying)
            h.engine.updateURL(id: "sb", try SubmittedURL.parse(origin.url("/f/short.bin?size=60000&seed=15")))
            let end = await h.recorder.end(of: "sb")
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(60_000, 15))
            await #expect(origin.requests().last?.range == "bytes=59000-")
        }
    }

    @Test func checksumMismatchFailsAndKeepsNothing() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let wrong = String(repeating: "0", count: 64)
            let end = await h.download(TransferSpec(id: "cm", url: origin.url("/f/sum.bin?size=10000&seed=16"), checksum: try Checksum(algorithm: .sha256, value: wrong)))
            let failure = try #require(end?.failure)
            #expect(failure.code == .checksumMismatch)
            #expect(h.finishedNames().isEmpty)
            await h.recorder.wait(timeout: 2) { _ in h.partialSize("cm") == nil }
            #expect(h.partialSize("cm") == nil)
            // The right digest (any case) passes.
            let right = Self.sha(10_000, 16).uppercased()
            let ok = await h.download(TransferSpec(id: "cm2", url: origin.url("/f/sum.bin?size=10000&seed=16"), checksum: try Checksum(algorithm: .sha256, value: right)))
            #expect(ok?.finishedFile?.sha256 == Self.sha(10_000, 16))
        }
    }

    @Test func followsARedirectChainAndNamesTheFileFromTheFinalURL() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let target = origin.url("/f/final%20name.bin?size=7000&seed=17")
            let end = await h.download(TransferSpec(id: "rd", url: origin.url("/r/3?to=\(Self.encoded(target))")))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.finalURL == target)
            #expect(file.filename == "final name.bin")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(7_000, 17))
            #expect(h.recorder.events(for: "rd").compactMap(\.metadata).first?.finalURL == target)
        }
    }

    @Test func redirectLoopFailsWithTooManyRedirects() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let end = await h.download(TransferSpec(id: "lp", url: origin.url("/loop")))
            #expect(end?.failure?.code == .tooManyRedirects)
            await #expect(origin.requests().count == 11)
            #expect(h.finishedNames().isEmpty)
        }
    }

    @Test func contentDispositionNamesAreSanitized() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let traversal = Self.encoded("attachment; filename=\"../../etc/passwd\"")
            let first = await h.download(TransferSpec(id: "cd1", url: origin.url("/f/x.bin?size=100&seed=18&cd=\(traversal)")))
            let file = try #require(first?.finishedFile)
            #expect(file.filename == "passwd")
            #expect(file.path == h.spool.root + "/files/passwd")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(100, 18))
            let utf8 = Self.encoded("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt")
            let second = await h.download(TransferSpec(id: "cd2", url: origin.url("/f/y.bin?size=200&seed=19&cd=\(utf8)")))
            let named = try #require(second?.finishedFile)
            #expect(named.filename == "€ rates.txt")
            #expect(try Fixture.sha256Hex(ofFile: named.path) == Self.sha(200, 19))
            #expect(h.finishedNames() == ["passwd", "€ rates.txt"])
        }
    }

    @Test func rangeIgnoredRestartsFromZero() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            // 30,000 bytes of the file are already on disk from an earlier run.
            try Data(Fixture.content(size: 30_000, seed: 20)).write(to: URL(fileURLWithPath: h.spool.partialPath(for: "ri")))
            let resume = ResumeValidators(etag: "\"s20-90000\"", bytesExpected: 90_000)
            let url = origin.url("/f/ignore.bin?size=90000&seed=20&ignore_range=1")
            let end = await h.download(TransferSpec(id: "ri", url: url, resume: resume))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.size == 90_000)
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(90_000, 20))
            #expect(h.recorder.events(for: "ri").contains { $0.isRestarted })
            await #expect(origin.requests().count == 1)
            await #expect(origin.requests().first?.range == "bytes=30000-")
        }
    }

    @Test func etagChangedBetweenPauseAndResumeRestarts() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let url = origin.url("/f/changing.bin?size=400000&seed=21&etag_change_after=1&rate=400000")
            h.engine.submit(TransferSpec(id: "ec", url: url))
            await h.recorder.wait { $0.contains { $0.id == "ec" && ($0.progress?.bytesReceived ?? 0) > 50_000 } }
            h.engine.pause(id: "ec")
            await h.recorder.wait { $0.contains { if case .paused = $0 { true } else { false } } }
            let metadata = try #require(h.recorder.events(for: "ec").compactMap(\.metadata).last)
            let onDisk = try #require(h.partialSize("ec"))
            #expect(onDisk > 0 && onDisk < 400_000)
            let resume = ResumeValidators(etag: metadata.etag, lastModified: metadata.lastModified,
                                          bytesExpected: metadata.bytesExpected, finalURL: metadata.finalURL)
            let fast = origin.url("/f/changing.bin?size=400000&seed=21&etag_change_after=1&key=" + Self.encoded("/f/changing.bin?size=400000&seed=21&etag_change_after=1&rate=400000"))
            let end = await h.download(TransferSpec(id: "ec", url: fast, resume: resume))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(400_000, 22))
            #expect(file.etag != metadata.etag)
            #expect(h.recorder.events(for: "ec").contains { $0.isRestarted })
            let last = try await #require(origin.requests().last)
            #expect(last.range == "bytes=\(onDisk)-")
            #expect(last.ifRange == metadata.etag)
        }
    }

    @Test func completeLocalFileGets416AndFinishes() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            try Data(Fixture.content(size: 50_000, seed: 23)).write(to: URL(fileURLWithPath: h.spool.partialPath(for: "cp")))
            let resume = ResumeValidators(etag: "\"s23-50000\"", bytesExpected: 50_000)
            let end = await h.download(TransferSpec(id: "cp", url: origin.url("/f/whole.bin?size=50000&seed=23"), filename: "whole.bin", resume: resume))
            let file = try #require(end?.finishedFile, "\(String(describing: end))")
            #expect(file.sha256 == Self.sha(50_000, 23))
            #expect(try Fixture.sha256Hex(ofFile: file.path) == file.sha256)
            #expect(file.filename == "whole.bin")
            await #expect(origin.requests().map(\.range) == ["bytes=50000-"])
        }
    }

    @Test func maxFileSizeWithKnownLength() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run({ $0.maxFileSize = 10_000 }) { h in
            let end = await h.download(TransferSpec(id: "mk", url: origin.url("/f/big.bin?size=50000&seed=24")))
            #expect(end?.failure?.code == .fileTooLarge)
            #expect(h.finishedNames().isEmpty)
            await #expect(origin.requests().count == 1)
        }
    }

    @Test func maxFileSizeWithUnknownLength() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run({ $0.maxFileSize = 10_000 }) { h in
            let end = await h.download(TransferSpec(id: "mu", url: origin.url("/f/stream.bin?size=50000&seed=25&no_length=1")))
            #expect(end?.failure?.code == .fileTooLarge)
            #expect(h.finishedNames().isEmpty)
            await #expect(origin.requests().count == 1)
            // Within the limit, a close-delimited body downloads fine.
            let ok = await h.download(TransferSpec(id: "mu2", url: origin.url("/f/stream2.bin?size=9000&seed=25&no_length=1")))
            let file = try #require(ok?.finishedFile)
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(9_000, 25))
        }
    }

    @Test func guardRefusesLoopbackLiteralsAndNames() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run({ $0.allowPrivateNetworks = false }) { h in
            let literal = await h.download(TransferSpec(id: "g1", url: origin.url("/f/a.bin?size=10")))
            #expect(literal?.failure?.code == .forbiddenDestination)
            let numeric = await h.download(TransferSpec(id: "g2", url: "http://2130706433:\(origin.port)/f/a.bin?size=10"))
            #expect(numeric?.failure?.code == .forbiddenDestination)
            // A name is checked on the address actually connected (CURLOPT_OPENSOCKETFUNCTION), and not retried.
            let named = await h.download(TransferSpec(id: "g3", url: "http://localhost:\(origin.port)/f/a.bin?size=10"))
            let failure = try #require(named?.failure)
            #expect(failure.code == .forbiddenDestination)
            #expect(!h.recorder.events(for: "g3").contains { if case .waiting(_, .retrying) = $0 { true } else { false } })
            await #expect(origin.requests().isEmpty)
            #expect(h.finishedNames().isEmpty)
            // Other schemes never reach the engine: the service parses URLs first (SubmittedURL refuses them).
            #expect(throws: URLProblem.self) { try SubmittedURL.parse("ftp://example.com/a") }
        }
    }

    @Test func requestHeadersAreForwardedAndFramingHeadersDropped() async throws {
        let origin = try await FaultOrigin.start()
        defer { origin.stop() }
        try await EngineHarness.run { h in
            let headers = [(name: "X-Token", value: "abc"), (name: "Range", value: "bytes=0-1"), (name: "Host", value: "evil"),
                           (name: "Proxy-Authorization", value: "x"), (name: "Connection", value: "close")]
            let end = await h.download(TransferSpec(id: "hd", url: origin.url("/f/h.bin?size=1000&seed=26"), headers: headers))
            let file = try #require(end?.finishedFile)
            #expect(try Fixture.sha256Hex(ofFile: file.path) == Self.sha(1_000, 26))
            let request = try await #require(origin.requests().first)
            #expect(request.headers["x-token"] == "abc")
            #expect(request.range == nil)
            #expect(request.headers["host"] == "127.0.0.1:\(origin.port)")
            #expect(request.headers["proxy-authorization"] == nil)
            #expect(request.headers["user-agent"] == "Ferry/0.1")
        }
    }
}
