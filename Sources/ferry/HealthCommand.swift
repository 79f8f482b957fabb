import ArgumentParser
import FerryClient
import FerryCore
import FerryService
import Foundation

/// `ferry health`: asks `GET /healthz` of the service `ferry serve` would run with the same `--host` / `--port`
/// and `FERRY_HOST` / `FERRY_PORT`, so a container's `HEALTHCHECK` follows the configuration without a port
/// written twice (and without curl in the image). Exit 0 when it answers `200`; otherwise one line on stderr
/// saying why, and exit 1.
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that the Ferry on this machine answers its health endpoint (for container health checks).",
        discussion: """
            Asks GET /healthz of the service configured by the same --host and --port flags, or FERRY_HOST and \
            FERRY_PORT variables, as 'ferry serve' (a wildcard host, 0.0.0.0 or ::, is asked on 127.0.0.1 or ::1). \
            Exits 0 when it answers 200 within the timeout; otherwise prints the reason on one line and exits 1.
            """
    )

    @Option(help: "Address the service listens on (FERRY_HOST; default 127.0.0.1).") var host: String?
    @Option(help: "Port the service listens on (FERRY_PORT; default 8080).") var port: String?
    @Option(help: "Longest wait for the answer, connecting included: 2s, 500ms.") var timeout = "2s"

    func run() throws {
        try ClientRun.run {
            let check = try Self.check(host: host, port: port, timeout: timeout,
                                       environment: ProcessInfo.processInfo.environment)
            switch check.run() {
            case .healthy:
                Console.standardOutput.line("ok: \(check.target.url) answered 200")
                return 0
            case .unhealthy(let reason):
                Console.standardError.line("ferry: unhealthy: \(TerminalText.sanitized(reason))")
                return 1
            }
        }
    }

    /// The probe for these flags and environment, resolved by `ServiceConfiguration.resolve` (the rules and
    /// messages of `ferry serve`) from the host and port settings alone: other `FERRY_*` variables are not the
    /// probe's business.
    /// - Throws: `.usage` (exit 64) for a port or timeout that is not one.
    static func check(host: String?, port: String?, timeout: String, environment: [String: String])
        throws(ClientError) -> HealthCheck
    {
        let settings: [ServiceConfiguration.Setting] = [.host, .port]
        var flags: [ServiceConfiguration.Setting: String] = [:]
        flags[.host] = host
        flags[.port] = port
        let names = Set(settings.map(\.environmentName))
        let configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration.resolve(
                flags: flags, environment: environment.filter { names.contains($0.key) })
        } catch {
            throw .usage(error.description)
        }
        guard let seconds = DurationText.parse(timeout), seconds > 0 else {
            throw .usage("invalid value '\(timeout)' for --timeout: expected a duration such as 2s or 500ms")
        }
        let target = try HealthTarget(listeningHost: configuration.host, port: configuration.port)
        return HealthCheck(target: target, timeout: seconds)
    }
}
