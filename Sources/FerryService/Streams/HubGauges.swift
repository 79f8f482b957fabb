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

    private let figures = Mutex(Figures())

    /// Called on the hub's queue only.
    func update(_ latest: Figures) {
        figures.withLock { $0 = latest }
    }

    var current: Figures { figures.withLock { $0 } }
}
