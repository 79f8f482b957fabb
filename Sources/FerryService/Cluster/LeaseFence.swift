import Synchronization

/// One node's `LeaseTerm`, shared by those who must not act without a lease: the `LeaseKeeper` records each renewal
/// that succeeded; the supervisor fences and lifts by it (`JobSupervisor.enforceFence`); the engine asks it right
/// before a delivery request, a part upload or a multipart completion (`ClusterUploadLedger.mayAct`) and the webhook
/// sender before each notice. Reading it never waits for the database.
///
/// Owner: its `Mutex` (held for a comparison or an assignment only).
final class LeaseFence: Sendable {
    private let term: Mutex<LeaseTerm>
    /// The monotonic clock (tests give a fake one).
    let now: @Sendable () -> ContinuousClock.Instant

    init(lease: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        term = Mutex(LeaseTerm(lease: lease))
        self.now = now
    }

    /// A renewal sent at `sentAt` (read from `now`) succeeded.
    func renewed(sentAt: ContinuousClock.Instant) {
        term.withLock { $0.renewed(sentAt: sentAt) }
    }

    /// Whether this node may act on its jobs now.
    func holds() -> Bool {
        let now = now()
        return term.withLock { $0.holds(at: now) }
    }

    /// What one that last saw the node `fenced` (or not) must do now.
    func decision(fenced: Bool) -> LeaseTerm.Decision {
        let now = now()
        return term.withLock { $0.decision(at: now, fenced: fenced) }
    }

    /// How long the node may act after a renewal was sent.
    var fenceAfter: Duration { term.withLock { $0.fenceAfter } }
}
