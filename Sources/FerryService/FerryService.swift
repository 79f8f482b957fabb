import Foundation
import Logging
import Synchronization

/// The running service: builds the spool, store, engine, supervisor, event hub and HTTP server
/// from a `ServiceConfiguration`, recovers interrupted jobs, serves until stopped, and stops in
/// the order that keeps every byte: stop accepting, close streams, stop transfers (bytes kept,
/// jobs not marked paused), write state, close the store.
///
/// Use `run(configuration:logger:)` from the command line; tests use `start()` and `stop()`.
///
/// Concurrency: everything `start()` builds is one `RunningService` of constants, held under a mutex
/// from `start()` until `stop()` takes it back out; nothing else here changes.
public final class FerryService: Sendable {
    public let configuration: ServiceConfiguration
    private let logger: Logger
    /// What `start()` built: nil before it, and again once `stop()` took it.
    private let running = Mutex<RunningService?>(nil)

    public init(configuration: ServiceConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The port the server listens on (after `start`, until `stop`).
    public var port: Int? { running.withLock { $0?.server.boundPort } }

    /// Every route registered (method and pattern), for tests that walk them all; empty when not running.
    var registeredRoutes: [(method: String, pattern: String)] {
        running.withLock { $0?.router.registeredRoutes.map { ($0.method.rawValue, $0.pattern) } ?? [] }
    }

    /// Starts everything and returns once the server listens.
    public func start() async throws {
        let started = try await RunningService.start(configuration: configuration, logger: logger)
        running.withLock { $0 = started }
    }

    /// Stops in order; returns when state is saved. A second call finds nothing left to stop.
    public func stop() async {
        logger.info("stopping: no new connections; transfers keep their bytes")
        if let stopping = running.withLock({ $0.take() }) {
            await stopping.stop(grace: min(3, configuration.shutdownGrace))
        }
        logger.info("stopped")
    }

    /// Runs until SIGTERM or SIGINT, then stops gracefully (API.md, "Running").
    public static func run(configuration: ServiceConfiguration, logger: Logger) async throws {
        // This is the process's own service: it may set the allocator up and trim it.
        var configuration = configuration
        configuration.managesProcessMemory = true
        let service = FerryService(configuration: configuration, logger: logger)
        let signals = SignalWaiter([SIGTERM, SIGINT])
        try await service.start()
        let received = await signals.wait()
        logger.notice("received signal \(received)")
        await service.stop()
    }
}
