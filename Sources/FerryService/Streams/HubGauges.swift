import Synchronization

/// The event hub's figures for `/metrics`, as of its last publish or heartbeat: written on the hub's queue, read from
/// any thread without waiting for that queue. A saturated service's hub queue can be seconds behind (an hour's soak
/// on 2 cores: `/metrics` took 21 s while it waited there, a cooperative thread blocked all that time), and that is
/// exactly when someone looks.
final class HubGauges: Sendable {
    struct Figures: Sendable, Equatable {
        /// The replay window's `job`/`removed` events and its bound.
        var windowEvents = 0
        var windowCapacity = 0
        /// Private streams reading the log from their own position, and the events held in private streams' queues
        /// and outboxes (what slow subscribers cost beyond the log).
        var readingLog = 0
        var heldEvents = 0
    }

    private let figures = Mutex((figures: Figures(), renewed: -Double.infinity))

    /// Renews the figures from the hub's log and registry: at most once a second of the hub's clock (it walks the
    /// private streams), or at once when `now` is nil. On the hub's queue only.
    func renew(log: EventLog, registry: SubscriberRegistry, now: Double?) {
        if let now {
            guard figures.withLock({ now - $0.renewed >= 1 }) else { return }
        }
        let (reading, held) = registry.privateFigures
        let latest = Figures(windowEvents: log.count, windowCapacity: log.capacity, readingLog: reading, heldEvents: held)
        figures.withLock { $0 = (latest, now ?? $0.renewed) }
    }

    var current: Figures { figures.withLock { $0.figures } }
}
