import Foundation
import Testing

/// The fault origin (`Tests/Fixtures/fault_origin.py`) running on 127.0.0.1 for one test: an HTTP/1.1 origin
/// that drops connections, stalls, changes ETags, answers 5xx/429 with Retry-After or lies about lengths, as
/// the query of each URL asks (the URL scheme is in /work/CONTRACTS.md and the script's doc string), e.g.
/// `url("/f/a.bin?size=1000000&seed=3&drop_after=4096&fail_times=1")`. It also receives uploads (onward delivery
/// targets): `PUT` or multipart `POST` to `/u/<name>?statuses=503,503&retry_after=2&reset_after=N&stall_after=N`,
/// answering the scripted statuses (then 201), resetting or stalling mid-body, and recording each (`uploads()`).
///
/// Stop it with `stop()` in a `defer`: SIGTERM to its pid, SIGKILL after 5 s, temp files removed. `stop()` is
/// idempotent. The script also exits by itself when the test process is gone.
///
/// Thread safety: `stopped` is the only mutable state, guarded by `lock`; methods may be called from any thread.
public final class FaultOrigin: @unchecked Sendable {
    public typealias Request = FaultRequest

    public let port: Int
    public let process: ChildProcess
    /// Holds the port and pid files and the captured output.
    public let directory: String
    private let lock = NSLock()
    private var stopped = false

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var pid: pid_t { process.pid }

    private init(port: Int, process: ChildProcess, directory: String) {
        self.port = port
        self.process = process
        self.directory = directory
    }

    deinit { stop() }

    /// `baseURL` + `path` (a leading "/" is added when missing).
    public func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// The script, found next to this source file: `Tests/Fixtures/fault_origin.py`.
    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // Origins
            .deletingLastPathComponent()  // FerryTestSupport
            .deletingLastPathComponent()  // Tests
            .appendingPathComponent("Fixtures/fault_origin.py").path
    }

    /// The interpreter: /usr/bin/python3, or `python3` on PATH.
    public static func pythonPath() throws -> String {
        let candidates = ["/usr/bin/python3", "/usr/local/bin/python3"]
        guard let path = ExecutableSearch.find("python3", candidates: candidates) else {
            throw FixtureError.pythonNotInstalled(searched: candidates)
        }
        return path
    }

    /// Starts the script on a port the kernel picks and returns once it listens.
    public static func start() async throws -> FaultOrigin {
        let python = try pythonPath()
        let directory = try Fixture.tempDirectory("ferry-fault-origin")
        let portFile = directory + "/port"
        let process: ChildProcess
        do {
            process = try ChildProcess.launch(
                python,
                ["-u", scriptPath, "--port", "0", "--port-file", portFile, "--pid-file", directory + "/pid",
                 "--exit-with-parent"],
                outputDirectory: directory)
        } catch {
            Fixture.removeTree(directory)
            throw error
        }
        let port = try await process.awaitPortFile(portFile, what: "fault origin (\(scriptPath))", directory: directory)
        return FaultOrigin(port: port, process: process, directory: directory)
    }

    /// Every request received since start or the last `reset()`, oldest first (`GET /_requests`, asked on a thread
    /// of its own: the exchange blocks).
    public func fetchRequests() async throws -> [Request] {
        let port = port
        let response = try await offThePool { try LoopbackConnection.fetch(port: port, "/_requests") }
        guard response.status == 200, response.ending == .complete else {
            throw FixtureError.malformedResponse("/_requests answered \(response.status), \(response.ending)")
        }
        return try JSONDecoder().decode([Request].self, from: Data(response.body))
    }

    /// Like `fetchRequests()`, but a failure is recorded as a test issue (failing the current test) and
    /// answered with an empty list.
    public func requests(sourceLocation: SourceLocation = #_sourceLocation) async -> [Request] {
        do {
            return try await fetchRequests()
        } catch {
            Issue.record(error, "fault origin /_requests failed", sourceLocation: sourceLocation)
            return []
        }
    }

    /// Every upload (`PUT`/`POST` to `/u/<name>`) that ended since start or the last `reset()`, in the order they
    /// ended (`GET /_uploads`).
    public func fetchUploads() async throws -> [FaultUpload] {
        let port = port
        let response = try await offThePool { try LoopbackConnection.fetch(port: port, "/_uploads") }
        guard response.status == 200, response.ending == .complete else {
            throw FixtureError.malformedResponse("/_uploads answered \(response.status), \(response.ending)")
        }
        return try JSONDecoder().decode([FaultUpload].self, from: Data(response.body))
    }

    /// Like `fetchUploads()`, but a failure is recorded as a test issue and answered with an empty list.
    public func uploads(sourceLocation: SourceLocation = #_sourceLocation) async -> [FaultUpload] {
        do {
            return try await fetchUploads()
        } catch {
            Issue.record(error, "fault origin /_uploads failed", sourceLocation: sourceLocation)
            return []
        }
    }

    /// Clears the request log, the upload log and the per-key counters (`GET /_reset`); a failure is recorded as a test issue.
    public func reset(sourceLocation: SourceLocation = #_sourceLocation) async {
        do {
            let port = port
            let response = try await offThePool { try LoopbackConnection.fetch(port: port, "/_reset") }
            guard response.status == 200 else {
                throw FixtureError.malformedResponse("/_reset answered \(response.status)")
            }
        } catch {
            Issue.record(error, "fault origin /_reset failed", sourceLocation: sourceLocation)
        }
    }

    /// Stops the script: SIGTERM now; on a thread of its own SIGKILL after 5 s, then its directory is removed.
    /// Returns at once. Idempotent.
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        let directory = directory
        process.stopInBackground(grace: 5) { Fixture.removeTree(directory) }
    }
}
