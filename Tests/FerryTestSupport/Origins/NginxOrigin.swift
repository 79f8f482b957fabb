import Foundation

/// A real nginx serving files on 127.0.0.1 for one test, with its own prefix directory (config, pid file, logs,
/// temp paths) so it never touches the system's nginx.
///
/// - `url("/a.bin")` serves `root/a.bin` with ETag, Last-Modified and Range support, as nginx does.
/// - `url("/slow/a.bin?rate=65536")` serves the same file at 65,536 bytes per second (`limit_rate`; nginx sends
///   the first second's worth at once, so N bytes take about N/rate - 1 seconds).
/// - `accessLog()` returns what nginx logged: method, path, status, Range, If-Range, body bytes sent.
///
/// Stop it with `stop()` in a `defer`: SIGTERM to the master's pid at once; on a thread of its own, SIGKILL to its
/// process group after 5 s, then the prefix (and `root`, when the origin created it) is removed. `stop()` is
/// idempotent and returns at once (no concurrency-pool thread waits for nginx).
///
/// Thread safety: `stopped` is the only mutable state, guarded by `lock`; methods may be called from any thread.
public final class NginxOrigin: @unchecked Sendable {
    public let port: Int
    /// The directory served at `/`.
    public let root: String
    /// The directory holding nginx.conf, nginx.pid, error.log, access.log and temp paths.
    public let prefix: String
    /// The nginx master process (nginx runs with `daemon off`).
    public let process: ChildProcess
    private let ownsRoot: Bool
    private let lock = NSLock()
    private var stopped = false

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    /// The master's pid.
    public var pid: pid_t { process.pid }

    private init(port: Int, root: String, prefix: String, process: ChildProcess, ownsRoot: Bool) {
        self.port = port
        self.root = root
        self.prefix = prefix
        self.process = process
        self.ownsRoot = ownsRoot
    }

    deinit { stop() }

    /// `baseURL` + `path` (a leading "/" is added when missing).
    public func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// Where nginx is installed: /usr/sbin/nginx, or `nginx` on PATH.
    public static func executablePath() throws -> String {
        let candidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/local/nginx/sbin/nginx"]
        guard let path = ExecutableSearch.find("nginx", candidates: candidates) else {
            throw FixtureError.nginxNotInstalled(searched: candidates)
        }
        return path
    }

    /// Starts nginx on a free loopback port serving `root`, or a fresh temp directory (removed by `stop()`).
    /// Returns once the port accepts connections (awaiting between checks). Retries with another port (up to 5
    /// times) when the port was taken between choosing it and nginx binding it.
    public static func start(root: String? = nil) async throws -> NginxOrigin {
        let executable = try executablePath()
        let servedRoot = try root ?? Fixture.tempDirectory("ferry-nginx-root")
        var lastFailure: Error = FixtureError.startFailed("nginx", detail: "no attempt made")
        for _ in 0..<5 {
            let prefix = try Fixture.tempDirectory("ferry-nginx")
            do {
                let origin = try await launch(executable: executable, prefix: prefix, root: servedRoot, ownsRoot: root == nil)
                return origin
            } catch let failure as PortTaken {
                lastFailure = failure.error
                Fixture.removeTree(prefix)
            } catch {
                Fixture.removeTree(prefix)
                if root == nil { Fixture.removeTree(servedRoot) }
                throw error
            }
        }
        if root == nil { Fixture.removeTree(servedRoot) }
        throw lastFailure
    }

    private struct PortTaken: Error { var error: FixtureError }

    private static func launch(executable: String, prefix: String, root: String, ownsRoot: Bool) async throws -> NginxOrigin {
        let port = try LoopbackSocket.freePort()
        try FileManager.default.createDirectory(atPath: prefix + "/temp", withIntermediateDirectories: true)
        let configuration = NginxConfiguration(prefix: prefix, root: root, port: port, runAsRoot: geteuid() == 0)
        try configuration.text.write(toFile: prefix + "/nginx.conf", atomically: true, encoding: .utf8)
        let process = try ChildProcess.launch(
            executable, ["-p", prefix + "/", "-c", prefix + "/nginx.conf", "-e", prefix + "/error.log"],
            outputDirectory: prefix)
        let origin = NginxOrigin(port: port, root: root, prefix: prefix, process: process, ownsRoot: ownsRoot)
        enum Outcome { case ready, exited(Int32) }
        // nginx writes its pid file only after binding its listeners.
        let outcome = await pollUntil(timeout: 10) { () -> Outcome? in
            if let status = process.exitStatusIfExited() { return .exited(status) }
            return FileManager.default.fileExists(atPath: prefix + "/nginx.pid") && LoopbackSocket.accepts(port: port) ? .ready : nil
        }
        switch outcome {
        case .ready: return origin
        case .exited(let status):
            origin.markStopped()
            let log = ChildProcess.readText(prefix + "/error.log") + process.standardError()
            let error = FixtureError.startFailed("nginx on port \(port)", detail: "exit status \(status): \(log)")
            if log.contains("Address already in use") { throw PortTaken(error: error) }
            throw error
        case nil:
            origin.markStopped()
            await process.stopped(grace: 5)
            throw FixtureError.timedOut("nginx on port \(port) did not accept connections within 10 s: "
                + ChildProcess.readText(prefix + "/error.log"))
        }
    }

    /// Every access log line so far, parsed. nginx writes a line when a request ends, so a line may appear a
    /// moment after the client saw the last byte: use `accessLog(count:timeout:)` to wait for it.
    public func accessLog() -> [NginxLogEntry] {
        ChildProcess.readText(prefix + "/access.log").split(separator: "\n").compactMap {
            NginxLogEntry(line: String($0))
        }
    }

    /// Waits up to `timeout` seconds until at least `count` lines were logged (awaiting between checks), then
    /// returns all of them.
    public func accessLog(count: Int, timeout: Double = 5) async -> [NginxLogEntry] {
        await pollUntil(timeout: timeout) { () -> [NginxLogEntry]? in
            let entries = accessLog()
            return entries.count >= count ? entries : nil
        } ?? accessLog()
    }

    /// What nginx wrote to its error log.
    public func errorLog() -> String { ChildProcess.readText(prefix + "/error.log") }

    /// Stops nginx: SIGTERM now; on a thread of its own SIGKILL to its group after 5 s, then the prefix and an owned
    /// root are removed. Returns at once. Idempotent.
    public func stop() {
        guard markStopped() else { return }
        let (prefix, root, ownsRoot) = (prefix, root, ownsRoot)
        process.stopInBackground(grace: 5) {
            Fixture.removeTree(prefix)
            if ownsRoot { Fixture.removeTree(root) }
        }
    }

    /// Sets `stopped`; false when it was already set.
    @discardableResult
    private func markStopped() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if stopped { return false }
        stopped = true
        return true
    }
}
