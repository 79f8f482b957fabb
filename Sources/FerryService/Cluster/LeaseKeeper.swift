import FerryStore
import Foundation
import Logging

/// Keeps one node of several alive and busy: every third of `--lease` a heartbeat, the renewal of its jobs' leases
/// (jobs `renew` leaves out are stopped here: another node took them over) and a claim; a claim also when asked
/// (`claim()`: a slot freed, a job was created or released, a `ferry_jobs` notification). Claims take up to the
/// node's free slots (`--max-concurrent` minus the jobs it runs).
///
/// Owner: this actor owns whether a claim is under way (claims never overlap; one asked for meanwhile runs after)
/// and whether the store answered last time (`reachable`, with the pause of claims after it came back). Made and started by `ClusterMembership`.
actor LeaseKeeper {
    private let store: any ClusterJobStore
    private let node: String
    private let lease: Duration
    private let supervisor: JobSupervisor
    private let maxConcurrent: @Sendable () async -> Int
    private let logger: Logger
    private var claiming = false
    private var claimAgain = false
    /// Whether the last heartbeat reached the store; while it does not, the node claims nothing.
    private(set) var reachable = true
    /// After the store was away, no claims until then: every node lost the store with it, and each must first
    /// renew the leases that ran out meanwhile, or the first node back would take the others' running jobs.
    private var claimsFrom: ContinuousClock.Instant?

    init(store: any ClusterJobStore, node: String, lease: Duration, supervisor: JobSupervisor,
         maxConcurrent: @escaping @Sendable () async -> Int, logger: Logger) {
        self.store = store
        self.node = node
        self.lease = lease
        self.supervisor = supervisor
        self.maxConcurrent = maxConcurrent
        self.logger = logger
    }

    /// Heartbeat, renewal and a claim every third of the lease, until cancelled.
    func keepAlive() async {
        while !Task.isCancelled {
            await tick()
            try? await Task.sleep(for: lease / 3)
        }
    }

    /// One heartbeat and renewal, then a claim.
    func tick() async {
        do {
            _ = try await store.heartbeat(node: node, lease: lease)
            let mark = await supervisor.ownershipMark
            let renewed = try await store.renew(node: node, lease: lease)
            await supervisor.keepOnly(renewed, ownedBefore: mark)
            if !reachable {
                logger.notice("the job store answers again: claiming jobs again after one lease")
                claimsFrom = .now + lease
            }
            reachable = true
        } catch {
            if reachable {
                logger.error("cannot renew this node's leases: claiming nothing until the store answers", metadata: ["error": "\(error)"])
            }
            reachable = false
            return
        }
        await claim()
    }

    /// Claims jobs for the node's free slots and hands them to the supervisor.
    func claim() async {
        guard reachable, !Task.isCancelled else { return }
        if let claimsFrom {
            guard ContinuousClock.now >= claimsFrom else { return }
            self.claimsFrom = nil
        }
        if claiming { claimAgain = true; return }
        claiming = true
        defer { claiming = false }
        repeat {
            claimAgain = false
            let free = await maxConcurrent() - supervisor.ownedCount
            guard free > 0 else { return }
            do {
                let claimed = try await store.claim(node: node, limit: free, lease: lease)
                if !claimed.isEmpty {
                    logger.debug("claimed jobs", metadata: ["jobs": "\(claimed.count)"])
                    await supervisor.run(claimed: claimed)
                }
                if claimed.count == free { claimAgain = true }
            } catch {
                logger.warning("cannot claim jobs", metadata: ["error": "\(error)"])
                return
            }
        } while claimAgain
    }
}
