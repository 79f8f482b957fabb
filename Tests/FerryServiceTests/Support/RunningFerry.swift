import FerryService
import FerryTestSupport
import Foundation
import Logging

/// A Ferry service running in this test process on 127.0.0.1 with a port the kernel chose and a
/// spool in a temporary directory; stopped (and its directory removed) by `stop()`.
final class RunningFerry: @unchecked Sendable {
    let service: FerryService
    let spool: String
    let client: TestClient
    private let ownsSpool: Bool

    var port: Int { client.port }

    private init(service: FerryService, spool: String, client: TestClient, ownsSpool: Bool) {
        self.service = service
        self.spool = spool
        self.client = client
        self.ownsSpool = ownsSpool
    }

    /// - Parameter logs: keeps the service's messages from `.info` up (instead of printing its errors).
    static func start(token: String? = nil, spool: String? = nil, logs: LogCapture? = nil,
                      _ configure: (inout ServiceConfiguration) -> Void = { _ in }) async throws -> RunningFerry {
        let directory = try spool ?? Fixture.tempDirectory("ferry-service")
        var configuration = ServiceConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.spool = directory
        configuration.token = token
        configuration.allowPrivateNetworks = true
        configuration.minFreeSpace = 0
        configuration.publicDirectory = RunningFerry.repositoryRoot + "/Public"
        configure(&configuration)
        var logger = Logger(label: "ferry-test")
        logger.logLevel = ProcessInfo.processInfo.environment["FERRY_TEST_LOG"] == nil ? .error : .debug
        if let logs { logger = Logger(label: "ferry-test") { _ in logs.handler(level: .info) } }
        let service = FerryService(configuration: configuration, logger: logger)
        try await service.start()
        let port = try require_port(service.port)
        return RunningFerry(service: service, spool: directory, client: TestClient(port: port, token: token),
                            ownsSpool: spool == nil)
    }

    func stop() async {
        await service.stop()
        if ownsSpool { Fixture.removeTree(spool) }
    }

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

private func require_port(_ port: Int?) throws -> Int {
    guard let port else { throw TestClientError.protocolError("the service did not report a port") }
    return port
}

/// Runs `body` with a started Ferry and stops it afterwards, whether `body` threw or not.
func withFerry(token: String? = nil, _ configure: (inout ServiceConfiguration) -> Void = { _ in },
               _ body: (RunningFerry) async throws -> Void) async throws {
    let ferry = try await RunningFerry.start(token: token, configure)
    do {
        try await body(ferry)
    } catch {
        await ferry.stop()
        throw error
    }
    await ferry.stop()
}

/// Runs `body` with a started nginx origin serving `root`, stopped afterwards.
func withNginx(_ body: (NginxOrigin) async throws -> Void) async throws {
    let origin = try await NginxOrigin.start()
    do { try await body(origin) } catch { origin.stop(); throw error }
    origin.stop()
}

func withFaultOrigin(_ body: (FaultOrigin) async throws -> Void) async throws {
    let origin = try await FaultOrigin.start()
    do { try await body(origin) } catch { origin.stop(); throw error }
    origin.stop()
}

/// The `ferry` executable SwiftPM built next to the test bundle.
func ferryExecutable() throws -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("ferry").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory.deleteLastPathComponent()
    }
    let fallback = RunningFerry.repositoryRoot + "/.build/debug/ferry"
    guard FileManager.default.isExecutableFile(atPath: fallback) else {
        throw TestClientError.protocolError("the ferry executable was not found near \(CommandLine.arguments[0])")
    }
    return fallback
}
