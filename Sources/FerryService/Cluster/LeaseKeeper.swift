import FerryStore
import Foundation
import Logging

/// Keeps one node of several alive and busy: every third of `--lease` a heartbeat, the renewal of its jobs' leases
/// (jobs `renew` leaves out are stopped here: another node took them over) and a claim; a claim also when asked
/// (`claim()`: a slot freed, a job was created or released, a `ferry_jobs` notification). Claims take up to the
/// node's free slots (`--max-concurrent` minus the jobs it runs), and hold keys' `maxActiveJobs` across the nodes.
///
/// Renewals go through their own connection (`renewals`, not the one commits wait on) and are given a third of the
/// lease to answer (`TimeLimit`): a database that stops answering cannot hold the node's fence decision up. Each
/// renewal that succeeded is recorded in the `LeaseFence` (counted from when it was sent), and `watchFence` has the
/// supervisor fence the node once the last one is two thirds of a lease old, and lift it after the next.
///
/// Owner: this actor owns whether a claim is under way (claims never overlap; one asked for meanwhile runs after)
/// and whether the store answered last time (`reachable`, with the pause of claims after it came back). Made and started by `ClusterMembership`.
actor LeaseKeeper {
    private let store: any ClusterJobStore
    /// The store on a connection of its own, for heartbeats and renewals.
    private let renewals: any ClusterJobStore
    private let fence: LeaseFence
    private let node: String
    private let lease: Duration
    private let supervisor: JobSupervisor
    private let maxConcurrent: @Sendable () async -> Int
    /// The `maxActiveJobs` of the keys that have one, by key id, which claims hold cluster-wide.
    private let keyCaps: @Sendable () -> [String: Int64]
    private let logger: Logger
    private var claiming = false
    private var claimAgain = false
    /// Whether the last heartbeat reached the store; while it does not, the node claims nothing.
    private(set) var reachable = true
    /// After the store was away, no claims until then: every node lost the store with it, and each must first
    /// renew the leases that ran out meanwhile, or the first node back would take the others' running jobs.
    private var claimsFrom: ContinuousClock.Instant?

    init(store: any ClusterJobStore, renewals: any ClusterJobStore, fence: LeaseFence, node: String, lease: Duration,
         supervisor: JobSupervisor, maxConcurrent: @escaping @Sendable () async -> Int,
         keyCaps: @escaping @Sendable () -> [String: Int64] = { [:] }, logger: Logger) {
        self.store = store
        self.renewals = renewals
        self.fence = fence
        self.node = node
        self.lease = lease
        self.supervisor = supervisor
        self.maxConcurrent = maxConcurrent
        self.keyCaps = keyCaps
        self.logger = logger
    }

    /// Heartbeat, renewal and a claim every third of the lease, until cancelled.
    func keepAlive() async {
        while !Task.isCancelled {
            await tick()
            try? await Task.sleep(for: lease / 3)
        }
    }

    /// Has the supervisor check the fence often (a twelfth of the lease, at most every quarter second), until cancelled.
    func watchFence() async {
        let every = min(lease / 12, .milliseconds(250))
        while !Task.isCancelled {
            await supervisor.enforceFence()
            try? await Task.sleep(for: every)
        }
    }

    /// One heartbeat and renewal, then a claim, then which node runs what (`JobSupervisor.refreshOwners`).
    func tick() async {
        do {
            let mark = await supervisor.ownershipMark
            let sentAt = fence.now()
            let (renewals, node, lease) = (self.renewals, self.node, self.lease)
            let renewed = try await TimeLimit.run("renewing the leases of node \(node)", limit: lease / 3) {
                _ = try await renewals.heartbeat(node: node, lease: lease)
                return try await renewals.renew(node: node, lease: lease)
            }
            fence.renewed(sentAt: sentAt)
            await supervisor.keepOnly(renewed, ownedBefore: mark)
            await supervisor.enforceFence(renewed: renewed)
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
        await supervisor.refreshOwners()
    }

    /// Claims jobs for the node's free slots and hands them to the supervisor.
    func claim() async {
        guard reachable, fence.holds(), !Task.isCancelled else { return }
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
                let claimed = try await store.claim(node: node, limit: free, lease: lease, keyCaps: keyCaps())
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
