import FerryService
import FerryTestSupport
import Foundation
import Logging

struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A Ferry service running inside the test process on 127.0.0.1 (a port the kernel chose), with a spool in a
/// temporary directory and private networks allowed (the origins are on loopback). `stop()` stops it and
/// removes the spool.
final class InProcessFerry: @unchecked Sendable {
    let service: FerryService
    let spool: String
    let port: Int
    let token: String?

    var url: String { "http://127.0.0.1:\(port)" }

    private init(service: FerryService, spool: String, port: Int, token: String?) {
        self.service = service
        self.spool = spool
        self.port = port
        self.token = token
    }

    static func start(token: String? = nil) async throws -> InProcessFerry {
        let spool = try Fixture.tempDirectory("ferry-client-spool")
        var configuration = ServiceConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.spool = spool
        configuration.token = token
        configuration.allowPrivateNetworks = true
        configuration.minFreeSpace = 0
        configuration.publicDirectory = repositoryRoot + "/Public"
        var logger = Logger(label: "ferry-client-test")
        logger.logLevel = ProcessInfo.processInfo.environment["FERRY_TEST_LOG"] == nil ? .error : .debug
        let service = FerryService(configuration: configuration, logger: logger)
        do {
            try await service.start()
        } catch {
            Fixture.removeTree(spool)
            throw error
        }
        guard let port = service.port else {
            await service.stop()
            Fixture.removeTree(spool)
            throw HarnessError("the service did not report its port")
        }
        return InProcessFerry(service: service, spool: spool, port: port, token: token)
    }

    func stop() async {
        await service.stop()
        Fixture.removeTree(spool)
    }

    /// Where Ferry keeps a finished file.
    func finishedFile(_ filename: String) -> String { spool + "/files/" + filename }

    /// The repository root, found from this file's path.
    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
        }
        return FileManager.default.currentDirectoryPath
    }()
}

/// What one run of the `ferry` executable did.
struct CommandResult: Sendable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// stdout parsed as JSON.
    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(stdout.utf8)) }

    func jsonObject() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else { throw HarnessError("stdout is not a JSON object: \(stdout.prefix(300))") }
        return object
    }

    var description: String { "exit \(status)\n--- stdout\n\(stdout.suffix(2000))\n--- stderr\n\(stderr.suffix(2000))" }
}

/// The built `ferry` executable, found next to the test bundle (SwiftPM puts both in the same directory).
func ferryExecutable() throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("ferry").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory.deleteLastPathComponent()
    }
    for scratch in [".build-client", ".build"] {
        let fallback = InProcessFerry.repositoryRoot + "/\(scratch)/debug/ferry"
        if FileManager.default.isExecutableFile(atPath: fallback) { return fallback }
    }
    throw HarnessError("the ferry executable was not found near \(CommandLine.arguments[0])")
}

/// The environment client commands run with: the test process's, without any `FERRY_*` variable, plus `extra`.
func clientEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("FERRY_") }
    for (key, value) in extra { environment[key] = value }
    return environment
}

/// Runs `ferry <arguments>` to completion (killing it after `timeout` seconds), waiting off the pool.
/// - Parameter directory: the working directory (the command runs through `/bin/sh -c 'cd … && exec …'`).
func runFerry(_ arguments: [String], environment: [String: String] = clientEnvironment(), directory: String? = nil,
              timeout: Double = 60) async throws -> CommandResult {
    let child = try launchFerry(arguments, environment: environment, directory: directory)
    let status = try await offThePool { () -> Int32 in
        if let status = child.waitForExit(timeout: timeout) { return status }
        child.stop(grace: 1)
        throw HarnessError("ferry \(arguments.joined(separator: " ")) did not end within \(timeout) s: "
            + child.standardOutput().suffix(1000) + child.standardError().suffix(1000))
    }
    let result = CommandResult(status: status, stdout: child.standardOutput(), stderr: child.standardError())
    Fixture.removeTree(child.outputDirectory)
    return result
}

/// Starts `ferry <arguments>` in the background; the caller stops it.
func launchFerry(_ arguments: [String], environment: [String: String] = clientEnvironment(), directory: String? = nil)
    throws -> ChildProcess
{
    let executable = try ferryExecutable()
    guard let directory else { return try ChildProcess.launch(executable, arguments, environment: environment) }
    let quoted = ([executable] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let script = "cd '\(directory)' && exec " + quoted.joined(separator: " ")
    return try ChildProcess.launch("/bin/sh", ["-c", script], environment: environment)
}

/// Starts nginx and an in-process Ferry, runs `body`, and stops both whether `body` threw or not.
func withOriginAndFerry(token: String? = nil, _ body: (NginxOrigin, InProcessFerry) async throws -> Void)
    async throws
{
    let origin = try await NginxOrigin.start()
    let ferry: InProcessFerry
    do {
        ferry = try await InProcessFerry.start(token: token)
    } catch {
        origin.stop()
        throw error
    }
    do {
        try await body(origin, ferry)
    } catch {
        await ferry.stop()
        origin.stop()
        throw error
    }
    await ferry.stop()
    origin.stop()
}

/// Polls `condition` off the pool every 50 ms until it holds or `timeout` passes.
func eventually(timeout: Double = 20, _ what: String, _ condition: @escaping @Sendable () throws -> Bool) async throws {
    try await offThePool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            usleep(50_000)
        }
        throw HarnessError("timed out after \(timeout) s waiting for \(what)")
    }
}
