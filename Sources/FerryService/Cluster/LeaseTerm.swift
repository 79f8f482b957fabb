/// Whether a node may still act on its jobs, from when its last lease renewal was sent. Pure.
///
/// The database extends a node's leases by `lease` from the moment it runs the renewal, which is after the node sent
/// it; so counting from the send is on the safe side. The node stops acting (it is *fenced*) once its last successful
/// renewal was sent longer ago than `fenceAfter` (two thirds of the lease): its leases then still run for a third of
/// the lease at least, time enough to stop transfers, deliveries, part uploads and notices before another node may
/// take its jobs over. Nothing but a renewal that succeeded lifts the fence.
///
/// Instants are a monotonic clock's (`ContinuousClock`): a process stopped (`SIGSTOP`) and continued finds its term
/// over at once, whatever it was doing.
struct LeaseTerm: Sendable, Equatable {
    let lease: Duration
    /// When the last renewal that succeeded was sent; nil before the first.
    private(set) var renewedAt: ContinuousClock.Instant?

    init(lease: Duration, renewedAt: ContinuousClock.Instant? = nil) {
        self.lease = lease
        self.renewedAt = renewedAt
    }

    /// How long after a renewal was sent the node may go on acting: two thirds of the lease.
    var fenceAfter: Duration { lease * 2 / 3 }

    /// A renewal sent at `sentAt` succeeded. A late answer to an older renewal never moves the term back.
    mutating func renewed(sentAt: ContinuousClock.Instant) {
        if let renewedAt, renewedAt >= sentAt { return }
        renewedAt = sentAt
    }

    /// When the node must stop acting; nil when it never renewed (it holds nothing).
    var fenceAt: ContinuousClock.Instant? { renewedAt.map { $0 + fenceAfter } }

    /// Whether the node may act at `now`: it renewed, and not longer ago than `fenceAfter`.
    func holds(at now: ContinuousClock.Instant) -> Bool {
        guard let fenceAt else { return false }
        return now < fenceAt
    }

    /// What a watcher that last saw the node `fenced` (or not) must do at `now`.
    func decision(at now: ContinuousClock.Instant, fenced: Bool) -> Decision {
        switch (holds(at: now), fenced) {
        case (false, false): .fence
        case (true, true): .lift
        default: .keep
        }
    }

    enum Decision: Sendable, Equatable {
        /// Stop every transfer, delivery, part upload and notice now, keeping the bytes.
        case fence
        /// A renewal succeeded since the fence: resume the jobs the node still holds.
        case lift
        /// Nothing changes.
        case keep
    }
}
