import Dispatch
import Logging
import Synchronization

/// What every connection of one server shares: configuration, logger, responder, the shutdown group, counters.
/// Immutable apart from the atomics and the weak back-reference (set once before serving).
final class ServerContext: @unchecked Sendable {
    let configuration: HTTPServerConfiguration
    let logger: Logger
    let responder: HTTPResponder
    /// Entered once per listener and per connection; left when its fd is closed.
    let group = DispatchGroup()
    let openConnections = Atomic<Int>(0)
    /// Largest output buffer any connection held (bytes), for tests of write backpressure.
    let peakOutputBuffer = Atomic<Int>(0)
    weak var server: HTTPServer?

    init(configuration: HTTPServerConfiguration, logger: Logger, responder: @escaping HTTPResponder) {
        self.configuration = configuration
        self.logger = logger
        self.responder = responder
    }

    func recordOutputBuffer(_ size: Int) {
        var current = peakOutputBuffer.load(ordering: .relaxed)
        while size > current {
            let (exchanged, original) = peakOutputBuffer.compareExchange(expected: current, desired: size, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
