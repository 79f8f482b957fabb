import FerryStore
import Foundation
import Logging

/// Carries this node's `progress` events to the other nodes (`ClusterChannel.progress`), coalesced: it keeps the
/// latest event of each job this node runs and sends what it holds once a `period` (a second), in as few
/// notifications as fit, so PostgreSQL carries at most one progress a second per running job, however often the
/// engine samples. A `job` or `removed` event of a job drops its pending progress (the job event carries the
/// numbers; a progress must not follow a job's last event).
///
/// Owner: this actor owns the pending events. Fed by the commit pipeline (`CommitPipeline.Cluster`) with each batch
/// it committed, in order; its loop is run by `ClusterMembership`.
actor ProgressRelay {
    private let store: any ClusterJobStore
    private let node: String
    private let logger: Logger
    /// The latest progress event's JSON of each job, and the order jobs first appeared in.
    private var latest: [String: [UInt8]] = [:]
    private var order: [String] = []

    init(store: any ClusterJobStore, node: String, logger: Logger) {
        self.store = store
        self.node = node
        self.logger = logger
    }

    /// Takes note of a committed batch's events, in order.
    func note(_ events: [ServerEvent]) {
        for event in events {
            guard let id = event.jobID else { continue }
            switch event.kind {
            case .progress:
                if latest.updateValue(event.data, forKey: id) == nil { order.append(id) }
            case .job, .removed:
                latest[id] = nil
            case .reset:
                continue
            }
        }
    }

    /// Sends what is pending, then waits `period`, until cancelled.
    func run(every period: Duration) async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: period) } catch { return }
            await flush()
        }
    }

    /// Sends the pending events now (a failure is logged: the next second sends newer numbers).
    func flush() async {
        let events = order.compactMap { latest[$0] }
        latest = [:]
        order = []
        guard !events.isEmpty else { return }
        do {
            try await store.notify(ClusterChannel.progressPayloads(from: node, events), on: ClusterChannel.progress)
        } catch {
            logger.debug("cannot send progress to the other nodes", metadata: ["error": "\(error)"])
        }
    }
}
