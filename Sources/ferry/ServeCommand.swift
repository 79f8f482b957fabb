import ArgumentParser
import Foundation
import FerryService
import Logging

/// `ferry serve`: runs the service until SIGTERM or SIGINT. Its options are `ServeOption.all`'s: parsed with
/// `ServeArguments`, shown by `--help` from the same table; every option has an environment twin
/// (`--max-concurrent` / `FERRY_MAX_CONCURRENT`), and a flag wins over its variable.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Ferry service (REST API, event streams, browser page).",
        discussion: "Every option has an environment variable; a flag wins over its variable.\n\n" + ServeOption.helpText
    )

    /// Everything after `serve`: read by `ServeArguments` against the options' table.
    @Argument(parsing: .allUnrecognized, help: .private) var options: [String] = []

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let configuration: ServiceConfiguration
        do {
            let flags = try ServeArguments.parse(options)
            configuration = try ServiceConfiguration.resolve(flags: flags, environment: environment)
        } catch let problem as ServeArguments.Problem {
            throw ValidationError(problem.description)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        // StreamLogHandler's format, written in batches: one write per batch, not per access log line.
        LoggingSystem.bootstrap { label in
            var handler = BatchedLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        defer { BatchedLog.standardError.flush() }
        try await FerryService.run(configuration: configuration, logger: Logger(label: "ferry"))
    }
}
