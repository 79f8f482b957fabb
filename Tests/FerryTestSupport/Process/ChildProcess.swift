import Foundation

/// A process started by a test: its own process group (so a last-resort kill reaches its children too),
/// stdin from /dev/null, stdout and stderr captured to files, no inherited descriptors beyond 0-2.
///
/// Every child is listed in `ChildRegistry` until it has been reaped, and the registry kills what is left when the
/// test process exits. Tests still stop their children themselves, by pid, in a `defer`.
///
/// Thread safety: `exitStatus` is the only mutable state and is guarded by `lock` (one NSLock for one field);
/// every method may be called from any thread.
public final class ChildProcess: @unchecked Sendable {
    /// The child's pid, also its process group id.
    public let pid: pid_t
    public let executable: String
    public let arguments: [String]
    /// Where stdout and stderr are captured.
    public let standardOutputPath: String
    public let standardErrorPath: String

    private let lock = NSLock()
    private var exitStatus: Int32?
    /// The temp directory `launch` made for the output, removed with the last reference to this value (1,287
    /// `ferry-child*` directories were left in /tmp by one day of test runs when callers had to remove it).
    private let madeDirectory: String?

    private init(pid: pid_t, executable: String, arguments: [String], stdout: String, stderr: String,
                 madeDirectory: String?) {
        self.pid = pid
        self.executable = executable
        self.arguments = arguments
        self.standardOutputPath = stdout
        self.standardErrorPath = stderr
        self.madeDirectory = madeDirectory
    }

    deinit {
        if let madeDirectory { Fixture.removeTree(madeDirectory) }
    }

    /// Starts `executable` (an absolute path) with `args`.
    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` inherits the test process's.
    ///   - outputDirectory: where `<name>.stdout` / `<name>.stderr` go; `nil` makes a fresh temp directory, removed
    ///     when the last reference to the returned value goes (read the output before; `stopInBackground` keeps it).
    public static func launch(
        _ executable: String, _ args: [String], environment: [String: String]? = nil, outputDirectory: String? = nil
    ) throws -> ChildProcess {
        let directory = try outputDirectory ?? Fixture.tempDirectory("ferry-child")
        let name = (executable as NSString).lastPathComponent
        let stdoutPath = "\(directory)/\(name).stdout"
        let stderrPath = "\(directory)/\(name).stderr"
        let pid = try Spawn.run(
            executable: executable, arguments: [executable] + args, environment: environment,
            stdoutPath: stdoutPath, stderrPath: stderrPath)
        ChildRegistry.shared.add(pid)
        return ChildProcess(pid: pid, executable: executable, arguments: args, stdout: stdoutPath, stderr: stderrPath,
                            madeDirectory: outputDirectory == nil ? directory : nil)
    }

    /// Directory holding the captured output files.
    public var outputDirectory: String { (standardOutputPath as NSString).deletingLastPathComponent }

    /// Sends `signal` to the child (not its group). Does nothing once the child has been reaped.
    public func terminate(signal: Int32 = SIGTERM) {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Sends SIGKILL to the child's whole process group (the child and anything it forked).
    /// Does nothing once the child has been reaped (the group id could be reused).
    public func killGroup() {
        lock.lock()
        defer { lock.unlock() }
        if exitStatus == nil { kill(-pid, SIGKILL) }
    }

    /// Waits up to `timeout` seconds for the child to exit and reaps it, blocking the calling thread: for threads of
    /// the tests' own (`offThePool`, `atexit`); async code awaits `exit(within:)`.
    /// - Returns: the exit code, or 128 + signal number when killed by a signal; `nil` if still running.
    @available(*, noasync, message: "blocks a concurrency-pool thread: await exit(within:)")
    @discardableResult
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = poll() { return status }
            if Date() >= deadline { return nil }
            usleep(5_000)
        }
    }

    /// Waits up to `timeout` seconds for the child to exit and reaps it, awaiting between checks (no pool thread is
    /// held). A stall of the test process itself does not use up the wait (`pollUntil`).
    /// - Returns: the exit code, or 128 + signal number when killed by a signal; `nil` if still running.
    @discardableResult
    public func exit(within timeout: Double) async -> Int32? {
        if let status = poll() { return status }
        if timeout <= 0 { return nil }
        return await pollUntil(timeout: timeout, interval: 0.005) { poll() }
    }

    /// The exit status if the child has exited (reaping it), `nil` while it runs. Does not wait.
    public func exitStatusIfExited() -> Int32? { poll() }

    /// Whether the child has not exited yet (reaps it if it has).
    public var isRunning: Bool { poll() == nil }

    /// SIGTERM, up to `grace` seconds to exit, then SIGKILL to the group. Returns the exit status. Blocks the
    /// calling thread; async code awaits `stopped(grace:)`, a `defer` calls `stopInBackground(grace:)`.
    @available(*, noasync, message: "blocks a concurrency-pool thread: await stopped(grace:), or stopInBackground in a defer")
    @discardableResult
    public func stop(grace: Double = 5) -> Int32 {
        terminate(signal: SIGTERM)
        if let status = waitForExit(timeout: grace) { return status }
        killGroup()
        return waitForExit(timeout: 10) ?? -1
    }

    /// SIGTERM, up to `grace` seconds to exit, then SIGKILL to the group; awaits the exit. Returns the exit status.
    @discardableResult
    public func stopped(grace: Double = 5) async -> Int32 {
        terminate(signal: SIGTERM)
        if let status = await exit(within: grace) { return status }
        killGroup()
        return await exit(within: 10) ?? -1
    }

    /// SIGTERM now; the wait, SIGKILL to the group after `grace` seconds, the reaping and then `cleanup` happen on a
    /// thread of their own. Returns at once: for `defer` blocks and `deinit`, which cannot await.
    public func stopInBackground(grace: Double = 5, then cleanup: (@Sendable () -> Void)? = nil) {
        terminate(signal: SIGTERM)
        Thread.detachNewThread { [self] in
            _ = stop(grace: grace)
            cleanup?()
        }
    }

    /// What the child wrote to stdout so far.
    public func standardOutput() -> String { Self.readText(standardOutputPath) }
    /// What the child wrote to stderr so far.
    public func standardError() -> String { Self.readText(standardErrorPath) }

    private func poll() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == pid {
            exitStatus = Self.decode(status)
        } else if result < 0 && errno == ECHILD {
            exitStatus = -1  // reaped elsewhere; it is gone either way
        } else {
            return nil
        }
        ChildRegistry.shared.remove(pid)
        return exitStatus
    }

    /// Exit code, or 128 + signal (the shell's convention).
    static func decode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Waits for a server this process started to write the port it listens on to `portFile` (a number, as the
    /// test fixtures do), awaiting between checks. On failure — the child exited, or no port within `timeout` — the
    /// child is stopped and `directory` removed, and the error names `what` (with `hint` after an early exit).
    public func awaitPortFile(_ portFile: String, what: String, hint: String = "", directory: String, timeout: Double = 15) async throws -> Int {
        enum Outcome { case port(Int), exited(Int32) }
        let outcome = await pollUntil(timeout: timeout) { () -> Outcome? in
            if let status = poll() { return .exited(status) }
            return Int(Self.readText(portFile).trimmingCharacters(in: .whitespacesAndNewlines)).map(Outcome.port)
        }
        switch outcome {
        case .port(let port): return port
        case .exited(let status):
            Fixture.removeTree(directory)
            throw FixtureError.startFailed(what, detail: "exit status \(status): \(standardError())\(hint)")
        case nil:
            await stopped(grace: 1)
            Fixture.removeTree(directory)
            throw FixtureError.timedOut("\(what) did not write its port file within \(Int(timeout)) s")
        }
    }

    static func readText(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }
}
