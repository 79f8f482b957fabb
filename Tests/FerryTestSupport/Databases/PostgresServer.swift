import CPostgres
import Foundation
import Synchronization

/// A real PostgreSQL server for the tests of this process: `initdb` into a temporary directory, then `postgres` on
/// a free port of 127.0.0.1 (its socket in that directory too), trusting local connections as user `ferry`.
///
/// `shared()` starts one server on first use and every test shares it, each in a database of its own
/// (`createDatabase()`, `dropDatabase(_:)`, through libpq). PostgreSQL refuses to run as root: as root the programs
/// run as `postgres` (or `nobody`) through `setpriv`, which execs them, so the pid kept is the server's own. The
/// server is stopped by pid: at the process's exit (fast shutdown, then SIGKILL) and, should the test process die
/// without exiting (a crash, SIGKILL), by a watchdog shell that kills the server and removes its directory within
/// a second of noticing. Missing programs are an error naming the package to install, unless
/// `FERRY_SKIP_POSTGRES=1` leaves these tests out (`isSkipped`).
///
/// A test that stops or restarts the server (`restart()`) starts one of its own with `startPrivate()`.
///
/// Starting, restarting and every libpq call block: the async entry points run them on a thread of their own
/// (`offThePool`), never on the concurrency pool, whose two threads every other test of the process needs.
///
/// Thread safety: `stopped`, the database counter and the processes are guarded by `lock`; every method may be
/// called from any thread.
public final class PostgresServer: @unchecked Sendable {
    public let port: Int
    /// Holds `data/` (the cluster), the server's socket and the programs' captured output.
    public let directory: String
    /// The postmaster (a new one after `restart()`).
    public var process: ChildProcess { lock.withLock { running.process } }
    private var running: (process: ChildProcess, watchdog: ChildProcess?)
    private let lock = NSLock()
    private var stopped = false
    private var databases = 0

    /// The role every test connects as (the cluster's superuser, trusted on loopback).
    public static let user = "ferry"

    private init(port: Int, directory: String, process: ChildProcess, watchdog: ChildProcess?) {
        self.port = port
        self.directory = directory
        self.running = (process, watchdog)
    }

    /// True when `FERRY_SKIP_POSTGRES=1`: tests needing PostgreSQL are left out instead of failing.
    public static var isSkipped: Bool {
        ProcessInfo.processInfo.environment["FERRY_SKIP_POSTGRES"] == "1"
    }

    private static let sharedStart = Task { () throws -> PostgresServer in
        let server = try await offThePool { try PostgresServer.start() }
        sharedForExit.withLock { $0 = server }
        atexit { PostgresServer.stopShared() }
        return server
    }
    private static let sharedForExit = Mutex<PostgresServer?>(nil)

    /// The server of this test process, started on first call. Throws the start's error on every call when it failed.
    public static func shared() async throws -> PostgresServer {
        try await sharedStart.value
    }

    /// A server of the caller's own (not shared), for a test that restarts or stops it; `stop()` it at the end.
    public static func startPrivate() async throws -> PostgresServer {
        try await offThePool { try start() }
    }

    private static func stopShared() {
        sharedForExit.withLock { $0 }?.stopNow()
    }

    /// A libpq URL for `database` on this server.
    public func url(database: String) -> String {
        "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)"
    }

    /// Creates an empty database with a name no other test uses and returns the name.
    public func createDatabase() async throws -> String {
        let name = lock.withLock {
            databases += 1
            return "ferry_test_\(databases)"
        }
        try await administer("CREATE DATABASE \(name)")
        return name
    }

    /// Drops `database`, closing what is still connected to it, on a thread of its own: returns at once (a `defer`
    /// cannot await). Failures are ignored (the server is temporary).
    public func dropDatabase(_ database: String) {
        Thread.detachNewThread { try? self.administerBlocking("DROP DATABASE IF EXISTS \(database) WITH (FORCE)") }
    }

    /// Runs one administrative statement as the superuser (no parameters: `CREATE DATABASE` takes none), in the
    /// `postgres` database unless another is named, on a thread of its own; rows it returns are ignored.
    public func administer(_ sql: String, database: String = "postgres") async throws {
        try await offThePool { try self.administerBlocking(sql, database: database) }
    }

    private func administerBlocking(_ sql: String, database: String = "postgres") throws {
        guard let connection = PQconnectdb(Self.conninfo(port: port, database: database)) else {
            throw FixtureError.startFailed("PostgreSQL connection", detail: "out of memory")
        }
        defer { PQfinish(connection) }
        guard PQstatus(connection) == CONNECTION_OK else {
            throw FixtureError.startFailed("PostgreSQL connection on port \(port)",
                                           detail: String(cString: PQerrorMessage(connection)))
        }
        guard let result = PQexec(connection, sql) else {
            throw FixtureError.malformedResponse("\(sql): \(String(cString: PQerrorMessage(connection)))")
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK else {
            throw FixtureError.malformedResponse("\(sql): \(String(cString: PQresultErrorMessage(result)))")
        }
    }

    /// Stops the server (SIGINT: fast shutdown; SIGKILL to its group after 10 s), then the watchdog, and removes the
    /// directory, on a thread of its own: returns at once (a `defer` cannot await). Idempotent.
    public func stop() {
        Thread.detachNewThread { self.stopNow() }
    }

    /// `stop()` on the calling thread, for `atexit`.
    private func stopNow() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        guard !wasStopped else { return }
        Self.shutDown(lock.withLock { running })
        Fixture.removeTree(directory)
    }

    /// Stops the server (fast shutdown: every connection is closed) and starts it again on the same port and data,
    /// as an administrator restarting PostgreSQL would. Returns once it accepts connections again; the waiting is done
    /// on a thread of its own.
    public func restart() async throws {
        try await offThePool { try self.restartBlocking() }
    }

    private func restartBlocking() throws {
        let previous = lock.withLock { running }
        Self.shutDown(previous)
        let (binaries, account) = (try Self.binaryDirectory(), try Account.unprivileged())
        let started = try Self.launch(command: { program, args in
            account?.command(binaries + "/" + program, args) ?? (binaries + "/" + program, args)
        }, directory: directory, port: port)
        lock.withLock { running = started.running }
    }

    /// SIGINT (fast shutdown), SIGKILL to its group after 10 s; then the watchdog.
    private static func shutDown(_ running: (process: ChildProcess, watchdog: ChildProcess?)) {
        running.process.terminate(signal: SIGINT)
        if running.process.waitForExit(timeout: 10) == nil {
            running.process.killGroup()
            running.process.waitForExit(timeout: 5)
        }
        running.watchdog?.killGroup()
        running.watchdog?.waitForExit(timeout: 5)
    }

    // MARK: Starting

    static func conninfo(port: Int, database: String) -> String {
        "host=127.0.0.1 port=\(port) dbname=\(database) user=\(user) connect_timeout=5"
    }

    /// Where Debian and Ubuntu put the server programs, newest first.
    public static let binaryDirectories = (12...18).reversed().map { "/usr/lib/postgresql/\($0)/bin" }

    /// The directory holding both `initdb` and `postgres`: `FERRY_POSTGRES_BIN` when set (e.g. `/usr/pgsql-16/bin`),
    /// else the first of `candidates` and `PATH` that has both.
    /// - Throws: `FixtureError.postgresNotInstalled`, whose message says what to install.
    public static func binaryDirectory(environment: [String: String] = ProcessInfo.processInfo.environment,
                                       candidates: [String] = binaryDirectories) throws -> String {
        let searched = environment["FERRY_POSTGRES_BIN"].map { [$0] }
            ?? candidates + (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        guard let found = searched.first(where: { access($0 + "/initdb", X_OK) == 0 && access($0 + "/postgres", X_OK) == 0 })
        else { throw FixtureError.postgresNotInstalled(searched: environment["FERRY_POSTGRES_BIN"].map { [$0] } ?? candidates) }
        return found
    }

    /// The account the server runs as when the tests run as root, and `setpriv` to become it.
    private struct Account {
        var uid: uid_t
        var gid: gid_t
        var setpriv: String

        static func unprivileged() throws -> Account? {
            guard geteuid() == 0 else { return nil }
            guard let setpriv = ExecutableSearch.find("setpriv", candidates: ["/usr/bin/setpriv", "/bin/setpriv"]) else {
                throw FixtureError.startFailed("PostgreSQL", detail: "running as root needs setpriv (util-linux) to start it as another user")
            }
            for name in ["postgres", "nobody"] {
                if let entry = getpwnam(name) { return Account(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid, setpriv: setpriv) }
            }
            throw FixtureError.startFailed("PostgreSQL", detail: "no unprivileged user (postgres, nobody) to run it as")
        }

        /// `executable args` run as this account.
        func command(_ executable: String, _ args: [String]) -> (String, [String]) {
            (setpriv, ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", executable] + args)
        }
    }

    static func start() throws -> PostgresServer {
        let binaries = try binaryDirectory()
        let account = try Account.unprivileged()
        func command(_ program: String, _ args: [String]) -> (String, [String]) {
            account?.command(binaries + "/" + program, args) ?? (binaries + "/" + program, args)
        }
        let directory = try Fixture.tempDirectory("ferry-postgres")
        do {
            if let account {
                guard chown(directory, account.uid, account.gid) == 0 else {
                    throw FixtureError.lastSystemCall("chown", directory)
                }
            }
            let (initdb, initArgs) = command("initdb", ["-D", directory + "/data", "-U", user, "--auth=trust",
                                                        "-E", "UTF8", "--locale=C", "--no-sync"])
            let setup = try ChildProcess.launch(initdb, initArgs, environment: ["LANG": "C", "PATH": "/usr/bin:/bin"],
                                                outputDirectory: directory)
            let status = setup.waitForExit(timeout: 120)
            guard status == 0 else {
                setup.killGroup()
                setup.waitForExit(timeout: 5)
                throw FixtureError.startFailed("initdb", detail: "exit status \(status.map(String.init) ?? "none after 120 s"): \(setup.standardError())")
            }
            var lastFailure: Error = FixtureError.startFailed("PostgreSQL", detail: "no attempt made")
            for _ in 0..<5 {
                do {
                    return try launch(command: command, directory: directory)
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

    private static func launch(command: (String, [String]) -> (String, [String]), directory: String,
                               port: Int? = nil) throws -> PostgresServer {
        let port = try port ?? LoopbackSocket.freePort()
        // Durability is not under test here: no fsync makes creating a database per test cheap.
        let (postgres, args) = command("postgres", [
            "-D", directory + "/data", "-k", directory, "-p", String(port), "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300",
        ])
        let process = try ChildProcess.launch(postgres, args, environment: ["LANG": "C", "PATH": "/usr/bin:/bin"],
                                              outputDirectory: directory)
        // Kills the server and removes its directory if this process dies without stopping it.
        let watchdog = try? ChildProcess.launch("/bin/sh", [
            "-c", "while kill -0 \"$1\" 2>/dev/null; do sleep 1; done; kill -KILL \"$2\" 2>/dev/null; sleep 1; rm -rf \"$3\"",
            "ferry-postgres-watchdog", String(getpid()), String(process.pid), directory,
        ], outputDirectory: directory)
        let server = PostgresServer(port: port, directory: directory, process: process, watchdog: watchdog)
        let deadline = Date().addingTimeInterval(60)
        let conninfo = conninfo(port: port, database: "postgres")
        while Date() < deadline {
            if let status = process.waitForExit(timeout: 0) {
                watchdog?.killGroup()
                watchdog?.waitForExit(timeout: 5)
                let log = process.standardError()
                let error = FixtureError.startFailed("PostgreSQL on port \(port)", detail: "exit status \(status): \(log)")
                if log.contains("already in use") { throw PortTaken(error: error) }
                throw error
            }
            if PQping(conninfo) == PQPING_OK { return server }
            usleep(50_000)
        }
        let log = process.standardError()
        process.killGroup()
        process.waitForExit(timeout: 5)
        watchdog?.killGroup()
        watchdog?.waitForExit(timeout: 5)
        throw FixtureError.timedOut("PostgreSQL on port \(port) did not accept connections within 60 s: \(log)")
    }
}
