import Foundation

/// A real OpenSSH server (Debian's `openssh-server`, `/usr/sbin/sshd`) on 127.0.0.1 for one test, serving SFTP
/// (`internal-sftp`) to the current user, with its own config, host key and authorized key in a temp directory.
/// It runs as the current user: no PAM, no strict modes, its pid file in the temp directory; as root it also needs
/// sshd's privilege separation directory, `/run/sshd`, which it creates when missing (as the Debian service does).
///
/// The client side is ready in `home`, to be Ferry's `HOME`: `home/.ssh/id_rsa` is the authorized key (libcurl's
/// default key file; an ECDSA key, since Debian 12's libssh2 signs RSA keys with SHA-1, which OpenSSH 9 refuses)
/// and `home/.ssh/known_hosts` holds this server's host key (`knownHostsLine`).
///
/// - `url("a.bin")` is `sftp://USER@127.0.0.1:PORT/<root>/a.bin`.
/// Stop it with `stop()` in a `defer`: SIGTERM to its pid at once; SIGKILL after 5 s and the removal of its directory
/// on a thread of its own. Idempotent.
/// Thread safety: `stopped` is the only mutable state, guarded by `lock`.
public final class SSHServer: @unchecked Sendable {
    public let port: Int
    /// The directory whose files `url(_:)` names.
    public let root: String
    /// A home directory for the client: `.ssh/id_rsa` and `.ssh/known_hosts`.
    public let home: String
    public let directory: String
    public let user: String
    /// `[127.0.0.1]:PORT <type> <key>`: this server's entry for a known-hosts file.
    public let knownHostsLine: String
    public let process: ChildProcess
    private let lock = NSLock()
    private var stopped = false

    private init(port: Int, root: String, home: String, directory: String, user: String, knownHostsLine: String, process: ChildProcess) {
        self.port = port
        self.root = root
        self.home = home
        self.directory = directory
        self.user = user
        self.knownHostsLine = knownHostsLine
        self.process = process
    }

    deinit { stop() }

    /// `sftp://user@127.0.0.1:port` + the absolute path of `name` in `root`.
    public func url(_ name: String) -> String { "sftp://\(user)@127.0.0.1:\(port)\(root)/\(name)" }

    /// Makes a fresh host key pair in `directory` and returns its known-hosts entry for this server: a key that
    /// is not this server's (for the "changed key" case).
    public func otherHostKeyLine() async throws -> String {
        let path = directory + "/other_host_key"
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: path + ".pub")
        try await Self.keygen(["-t", "ed25519", "-f", path], in: directory)
        return try Self.entry(port: port, publicKey: path + ".pub")
    }

    public static func start() async throws -> SSHServer {
        let sshd = "/usr/sbin/sshd"
        guard access(sshd, X_OK) == 0 else {
            throw FixtureError.startFailed("sshd", detail: "\(sshd) is missing: apt-get install openssh-server openssh-client")
        }
        if geteuid() == 0, !FileManager.default.fileExists(atPath: "/run/sshd") {
            try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        let directory = try Fixture.tempDirectory("ferry-sshd")
        do {
            let root = directory + "/files", home = directory + "/home"
            for path in [root, home + "/.ssh"] { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
            try await keygen(["-t", "ed25519", "-f", directory + "/host_key"], in: directory)
            try await keygen(["-t", "ecdsa", "-b", "256", "-f", home + "/.ssh/id_rsa"], in: directory)
            try FileManager.default.copyItem(atPath: home + "/.ssh/id_rsa.pub", toPath: directory + "/authorized_keys")
            let user = String(cString: getpwuid(geteuid()).pointee.pw_name)
            let port = try LoopbackSocket.freePort()
            let line = try entry(port: port, publicKey: directory + "/host_key.pub")
            try (line + "\n").write(toFile: home + "/.ssh/known_hosts", atomically: true, encoding: .utf8)
            let config = """
                Port \(port)
                ListenAddress 127.0.0.1
                HostKey \(directory)/host_key
                PidFile \(directory)/sshd.pid
                AuthorizedKeysFile \(directory)/authorized_keys
                UsePAM no
                StrictModes no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PubkeyAuthentication yes
                PermitRootLogin prohibit-password
                Subsystem sftp internal-sftp
                """
            try config.write(toFile: directory + "/sshd_config", atomically: true, encoding: .utf8)
            let process = try ChildProcess.launch(sshd, ["-D", "-e", "-f", directory + "/sshd_config"], outputDirectory: directory)
            let server = SSHServer(port: port, root: root, home: home, directory: directory, user: user, knownHostsLine: line, process: process)
            let exited = await pollUntil(timeout: 10) { () -> Int32?? in
                if let status = process.exitStatusIfExited() { return .some(status) }
                return LoopbackSocket.accepts(port: port) ? .some(nil) : nil
            }
            switch exited {
            case .some(nil): return server
            case .some(.some(let status)):
                server.markStopped()
                throw FixtureError.startFailed("sshd on port \(port)", detail: "exit status \(status): \(process.standardError())")
            case nil: break
            }
            server.markStopped()
            await process.stopped(grace: 5)
            throw FixtureError.timedOut("sshd on port \(port) did not accept connections within 10 s: \(process.standardError())")
        } catch {
            Fixture.removeTree(directory)
            throw error
        }
    }

    /// What sshd logged (`-e`: to standard error).
    public func serverLog() -> String { process.standardError() }

    /// Stops sshd: SIGTERM now; on a thread of its own SIGKILL after 5 s, then its directory is removed. Returns at
    /// once. Idempotent.
    public func stop() {
        guard markStopped() else { return }
        let directory = directory
        process.stopInBackground(grace: 5) { Fixture.removeTree(directory) }
    }

    /// Marks the server stopped; false when it already was.
    @discardableResult
    private func markStopped() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        let was = stopped
        stopped = true
        return !was
    }

    private static func entry(port: Int, publicKey: String) throws -> String {
        let fields = ChildProcess.readText(publicKey).split(separator: " ")
        guard fields.count >= 2 else { throw FixtureError.malformedResponse("no public key in \(publicKey)") }
        return "[127.0.0.1]:\(port) \(fields[0]) \(fields[1])"
    }

    private static func keygen(_ arguments: [String], in directory: String) async throws {
        guard let keygen = ExecutableSearch.find("ssh-keygen", candidates: ["/usr/bin/ssh-keygen"]) else {
            throw FixtureError.startFailed("ssh-keygen", detail: "not installed: apt-get install openssh-client")
        }
        let process = try ChildProcess.launch(keygen, ["-q", "-N", ""] + arguments, outputDirectory: directory)
        guard await process.exit(within: 30) == 0 else {
            throw FixtureError.startFailed("ssh-keygen \(arguments.joined(separator: " "))", detail: process.standardError())
        }
    }
}
