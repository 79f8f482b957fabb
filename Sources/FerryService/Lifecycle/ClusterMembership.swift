import FerryCore
import FerryStore
import Foundation
import Logging

/// One node's membership of several sharing a PostgreSQL store, for as long as the service runs: the start-up
/// check, the `LeaseKeeper`'s loops, and the `PostgresListener` whose notifications keep this node current (the
/// cluster's events read back by the `ClusterEventFeed`, other nodes' job changes read into the supervisor's table,
/// actions forwarded to this node carried out, other nodes' progress published here, page logouts made elsewhere
/// taken in), and the `ProgressRelay` sending this node's progress to the others. Made by `RunningService.start`; stopped by `RunningService.stop`,
/// which then gives the node's jobs back (`leave`).
final class ClusterMembership: Sendable {
    let store: any ClusterJobStore
    let node: String
    /// The store on a connection of its own, for the `LeaseKeeper`'s heartbeats and renewals.
    private let renewals: any ClusterJobStore
    private let listener: PostgresListener
    private let tasks: [Task<Void, Never>]
    private let logger: Logger

    /// Refuses an id another live process uses; gives back what an earlier process under this node id left owned (a
    /// process starting runs nothing: after a crash and a quick restart, renewing those leases would keep jobs that
    /// no one runs from every node), then records the node's first heartbeat and refuses several live nodes without
    /// an object store.
    static func join(store: any ClusterJobStore, configuration: ServiceConfiguration, logger: Logger) async throws {
        try await refuseIfInUse(store: store, configuration: configuration)
        let nodes: [ClusterNode]
        do {
            let released = try await store.leave(node: configuration.nodeID)
            if !released.isEmpty {
                logger.notice("jobs an earlier process of this node left owned are given back", metadata: [
                    "node": "\(configuration.nodeID)", "jobs": "\(released.count)",
                ])
            }
            nodes = try await store.heartbeat(node: configuration.nodeID, lease: configuration.lease)
        } catch {
            throw ServiceError.startup("cannot record node '\(configuration.nodeID)' in the PostgreSQL store \(configuration.store): \(error)")
        }
        let others = nodes.map(\.id).filter { $0 != configuration.nodeID }
        if !others.isEmpty, configuration.objectStore == nil, !configuration.allowsNodesWithoutObjectStore {
            _ = try? await store.leave(node: configuration.nodeID)
            throw ServiceError.startup("node '\(configuration.nodeID)' refused: the PostgreSQL store \(configuration.store) is already used by \(others.sorted().joined(separator: ", ")), and several nodes need --object-store (without one, a file would exist on one node only)")
        }
    }

    /// A node whose id has a running lease is either an earlier process of this node that died within it, or another
    /// live process given the same `--node-id`, whose jobs `leave` would give away: a live one beats again within a
    /// third of the lease, so this watches for one beat (at most a third of the lease and a second, only when the
    /// lease runs) and refuses the start when it comes.
    private static func refuseIfInUse(store: any ClusterJobStore, configuration: ServiceConfiguration) async throws {
        let id = configuration.nodeID
        func heartbeat() async throws -> Date? {
            do { return try await store.liveNodes().first { $0.id == id }?.heartbeatAt } catch {
                throw ServiceError.startup("cannot read the nodes of the PostgreSQL store \(configuration.store): \(error)")
            }
        }
        guard let earlier = try await heartbeat() else { return }
        let deadline = ContinuousClock.now + configuration.lease / 3 + .seconds(1)
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            guard let latest = try await heartbeat() else { return }
            if latest != earlier {
                throw ServiceError.startup("node id '\(id)' is in use by another live Ferry process on the PostgreSQL store \(configuration.store) (its heartbeat at \(Timestamp.rfc3339(latest))): give every node its own --node-id")
            }
        }
    }

    /// Starts listening and the lease loops.
    /// - Parameters:
    ///   - wants: requests to claim (`NodeRole.wantsWork`).
    ///   - refused: jobs whose commits the store refused (`CommitPipeline.Cluster.refused`).
    init(store: any ClusterJobStore, renewals: any ClusterJobStore, fence: LeaseFence, location: PostgresLocation,
         configuration: ServiceConfiguration,
         supervisor: JobSupervisor, feed: ClusterEventFeed, relay: ProgressRelay, sessions: Sessions?, keys: KeyDirectory? = nil,
         settings: LiveSettings,
         wants: AsyncStream<Void>, wantsWork: @escaping @Sendable () -> Void,
         refused: AsyncStream<[String: String]>, logger: Logger) {
        self.store = store
        self.renewals = renewals
        self.node = configuration.nodeID
        self.logger = logger
        let node = configuration.nodeID
        let keeper = LeaseKeeper(store: store, renewals: renewals, fence: fence, node: node, lease: configuration.lease,
                                 supervisor: supervisor, maxConcurrent: { await settings.current.maxConcurrent },
                                 keyCaps: { keys?.ring.limits(\.maxActiveJobs) ?? [:] }, logger: logger)
        let (notifications, notify) = AsyncStream<PostgresListener.Event>.makeStream()
        let refreshes = JobRefreshes { ids in
            if await supervisor.refresh(ids) { wantsWork() }
        }
        listener = PostgresListener(location: location, channels: ClusterChannel.all) { notify.yield($0) }
        tasks = [
            Task { await keeper.keepAlive() },
            Task { await keeper.watchFence() },
            Task { await relay.run(every: .seconds(1)) },
            Task { for await _ in wants { await keeper.claim() } },
            Task { for await owners in refused { await supervisor.refused(owners) } },
            Task {
                for await event in notifications {
                    switch event {
                    case .listening:
                        // What changed before listening (since start, or while the connection was lost).
                        await feed.catchUp()
                        await supervisor.refreshAll()
                        await sessions?.reload()
                        await keys?.reloadAll()
                        wantsWork()
                    case .notification(ClusterChannel.events, let payload):
                        await feed.heard(latest: Int64(payload))
                    case .notification(ClusterChannel.jobs, let payload):
                        await refreshes.heard(ClusterChannel.jobIDs(inPayload: payload))
                    case .notification(ClusterChannel.commands, let payload):
                        // Carried out beside the loop: a pause waits for the engine.
                        if let command = ClusterChannel.command(inPayload: payload, for: node) {
                            Task { await supervisor.perform(command) }
                        }
                    case .notification(ClusterChannel.progress, let payload):
                        guard let (sender, events) = ClusterChannel.progress(inPayload: payload), sender != node else { continue }
                        await feed.publishProgress(await supervisor.absorbProgress(events))
                    case .notification(ClusterChannel.sessions, let payload):
                        await sessions?.heard(payload)
                    case .notification(ClusterChannel.keys, let id):
                        await keys?.heard(id)
                    case .notification:
                        continue
                    case .lost(let error):
                        logger.warning("lost the PostgreSQL notification connection; reconnecting", metadata: ["error": "\(error)"])
                    }
                }
            },
        ]
        listener.start()
    }

    /// Stops claiming, renewing and listening (the jobs' leases run on until `leave`).
    func stop() async {
        for task in tasks { task.cancel() }
        await listener.stop()
        await renewals.close()
    }

    /// Gives every job of this node back, for other nodes to continue at once (graceful stop).
    func leave() async {
        do {
            let released = try await store.leave(node: node)
            logger.info("left the cluster", metadata: ["node": "\(node)", "released": "\(released.count)"])
        } catch {
            logger.warning("could not give this node's jobs back; they return to other nodes when the lease runs out",
                           metadata: ["error": "\(error)"])
        }
    }
}
