import FerryCore
@testable import FerryEngine
import FerryTestSupport
import Foundation
import Logging

/// An engine over a fresh temp spool, recording its events. Close it with `close()` (shutdown, then the spool
/// directory is removed); `EngineHarness.run` does that on success and failure.
struct EngineHarness {
    let root: String
    let spool: Spool
    let engine: DownloadEngine
    let recorder: EventRecorder

    /// Test defaults: loopback allowed, no free-space reserve, short back-offs, frequent progress.
    static func configuration(_ configure: (inout EngineConfiguration) -> Void = { _ in }) -> EngineConfiguration {
        var configuration = EngineConfiguration()
        configuration.allowPrivateNetworks = true
        configuration.minFreeSpace = 0
        configuration.retry = RetryPolicy(maxAttempts: 4, baseDelay: 0.05, maxDelay: 0.2)
        configuration.progressInterval = 0.1
        configuration.connectTimeout = 5
        configure(&configuration)
        return configuration
    }

    static func make(_ configure: (inout EngineConfiguration) -> Void = { _ in }) throws -> EngineHarness {
        let root = try Fixture.tempDirectory("ferry-engine-test")
        let spool = try Spool(root: root + "/spool")
        let recorder = EventRecorder()
        let engine = DownloadEngine(
            configuration: configuration(configure), spool: spool, logger: Logger(label: "ferry.engine.test"),
            onEvent: { recorder.record($0) })
        return EngineHarness(root: root, spool: spool, engine: engine, recorder: recorder)
    }

    /// A new engine over the same spool directory, with its own recorder: the process restarted. Shut the old
    /// engine down first (`engine.shutdown()`, not `close()`, which removes the directory).
    func reopen(_ configure: (inout EngineConfiguration) -> Void = { _ in }) throws -> EngineHarness {
        let spool = try Spool(root: self.spool.root)
        let recorder = EventRecorder()
        let engine = DownloadEngine(
            configuration: Self.configuration(configure), spool: spool, logger: Logger(label: "ferry.engine.test"),
            onEvent: { recorder.record($0) })
        return EngineHarness(root: root, spool: spool, engine: engine, recorder: recorder)
    }

    /// Runs `body` with a harness and always shuts the engine down and removes the spool.
    static func run(
        _ configure: (inout EngineConfiguration) -> Void = { _ in }, _ body: (EngineHarness) async throws -> Void
    ) async throws {
        let harness = try make(configure)
        do {
            try await body(harness)
        } catch {
            await harness.close()
            throw error
        }
        await harness.close()
    }

    func close() async {
        await engine.shutdown()
        Fixture.removeTree(root)
    }

    /// Names in `files/`.
    func finishedNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: spool.root + "/files")) ?? []).sorted()
    }

    func partialSize(_ id: String) -> Int64? {
        var info = stat()
        guard stat(spool.partialPath(for: id), &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Submits and waits for the end.
    func download(_ spec: TransferSpec, timeout: Double = 30) async -> TransferEvent? {
        engine.submit(spec)
        return await recorder.end(of: spec.id, timeout: timeout)
    }
}

extension TransferSpec {
    /// A spec for a URL the test writes as text (the service parses and checks URLs before they reach the engine).
    init(id: String, url: String, headers: [(name: String, value: String)] = [], filename: String? = nil,
         checksum: Checksum? = nil, maxBytesPerSecond: Int64? = nil, connections: Int? = nil, priority: Int = 0,
         sequence: Int64 = 0, attempts: Int = 0, resume: ResumeValidators? = nil) {
        guard let parsed = try? SubmittedURL.parse(url) else { preconditionFailure("a test URL that does not parse: \(url)") }
        self.init(id: id, url: parsed, headers: headers, filename: filename, checksum: checksum,
                  maxBytesPerSecond: maxBytesPerSecond, connections: connections, priority: priority, sequence: sequence,
                  attempts: attempts, resume: resume)
    }
}
