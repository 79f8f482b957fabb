import Foundation

/// A real FTP server (PyPI's pyftpdlib, `Tests/Fixtures/ftp_origin.py`) on 127.0.0.1 for one test, serving `root`
/// to one user, with explicit FTPS when given a certificate and the misbehaviours its options ask for (a `SIZE`
/// that lies, a throttled data connection, a PASV reply naming another address).
///
/// - `url("/a.bin")` is `ftp://ferry:secret@127.0.0.1:PORT/a.bin` (`scheme: "ftps"` for FTPS).
/// - `retrievals()` lists each RETR the server finished: the path, the REST offset asked for, the bytes sent.
///
/// Stop it with `stop()` in a `defer`: SIGTERM to its pid, SIGKILL after 5 s, its directory removed. Idempotent.
/// Thread safety: `stopped` is the only mutable state, guarded by `lock`.
public final class FTPOrigin: @unchecked Sendable {
    /// One finished RETR, from the server's log.
    public struct Retrieval: Decodable, Sendable {
        public let path: String?
        /// The REST offset the client asked for (0 without REST).
        public let rest: Int64
        /// Bytes of the file sent on the data connection.
        public let sent: Int64
        public let complete: Bool
    }

    /// What the server is told to do.
    public struct Options: Sendable {
        public var user = "ferry"
        public var password = "secret"
        /// `SIZE` answers this many bytes more than the file holds (negative: fewer).
        public var lieSize = 0
        /// Bytes per second per data connection; 0: unlimited.
        public var rate = 0
        /// PASV replies name this address (and EPSV is refused).
        public var masquerade: String?
        /// Explicit FTPS with this certificate and key (TLS required).
        public var tls: (certificate: String, key: String)?

        public init() {}
    }

    public let port: Int
    public let root: String
    public let directory: String
    public let options: Options
    public let process: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    public var pid: pid_t { process.pid }

    private init(port: Int, root: String, directory: String, options: Options, process: ChildProcess) {
        self.port = port
        self.root = root
        self.directory = directory
        self.options = options
        self.process = process
    }

    deinit { stop() }

    /// `scheme://user:password@127.0.0.1:port` + `path`.
    public func url(_ path: String, scheme: String = "ftp") -> String {
        "\(scheme)://\(options.user):\(options.password)@127.0.0.1:\(port)" + (path.hasPrefix("/") ? path : "/" + path)
    }

    public static var scriptPath: String {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ftp_origin.py").path
    }

    /// Starts the server serving a fresh temp directory (`root`, removed by `stop()`); returns once it listens.
    /// The interpreter is `python3` on PATH first (where `pip install pyftpdlib` put it), then /usr/bin/python3.
    public static func start(_ options: Options = Options()) async throws -> FTPOrigin {
        guard let python = ExecutableSearch.find("python3", candidates: []) ?? ExecutableSearch.find("python3", candidates: ["/usr/bin/python3"]) else {
            throw FixtureError.pythonNotInstalled(searched: ["PATH", "/usr/bin/python3"])
        }
        let directory = try Fixture.tempDirectory("ferry-ftp-origin")
        let root = directory + "/root"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        var arguments = ["-u", scriptPath, "--root", root, "--user", options.user, "--password", options.password,
                         "--port-file", directory + "/port", "--pid-file", directory + "/pid", "--log", directory + "/retrievals.log",
                         "--exit-with-parent"]
        if options.lieSize != 0 { arguments += ["--lie-size", String(options.lieSize)] }
        if options.rate > 0 { arguments += ["--rate", String(options.rate)] }
        if let masquerade = options.masquerade { arguments += ["--masquerade", masquerade] }
        if let tls = options.tls { arguments += ["--tls-cert", tls.certificate, "--tls-key", tls.key] }
        let process: ChildProcess
        do {
            process = try ChildProcess.launch(python, arguments, outputDirectory: directory)
        } catch {
            Fixture.removeTree(directory)
            throw error
        }
        let port = try await process.awaitPortFile(directory + "/port", what: "FTP origin (\(scriptPath))", hint: " (is pyftpdlib installed? python3 -m pip install pyftpdlib pyopenssl)", directory: directory)
        return FTPOrigin(port: port, root: root, directory: directory, options: options, process: process)
    }

    /// Every RETR the server finished so far (a RETR is logged when its data connection closes).
    public func retrievals() -> [Retrieval] {
        ChildProcess.readText(directory + "/retrievals.log").split(separator: "\n").compactMap {
            try? JSONDecoder().decode(Retrieval.self, from: Data($0.utf8))
        }
    }

    /// What the server wrote to standard error (pyftpdlib logs each command there).
    public func serverLog() -> String { process.standardError() }

    /// Stops the server: SIGTERM now; on a thread of its own SIGKILL after 5 s, then its directory is removed.
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
