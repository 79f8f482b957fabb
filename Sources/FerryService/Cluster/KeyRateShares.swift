import FerryEngine
import FerryStore
import Foundation
import Logging

/// A key's `maxBytesPerSecond` on several nodes: each node gives the key's transfers here the part of the limit
/// that matches its part of the key's downloading jobs (held under running leases on every node), read from the
/// store every `interval`. A node with none of them running keeps the whole limit for the first to start.
///
/// Owner: the loop's task (`RunningService`); holds nothing but what it was made with.
struct KeyRateShares: Sendable {
    static let interval: Duration = .seconds(2)

    let store: any ClusterJobStore
    let node: String
    let keys: KeyRing
    let engine: DownloadEngine
    let logger: Logger

    /// This node's part of `limit`: `limit` × `mine` / `total`, at least 1 byte/s; all of it when nothing here or
    /// nowhere runs.
    static func share(of limit: Int64, mine: Int, total: Int) -> Int64 {
        guard mine > 0, total > mine else { return limit }
        return max(1, Int64((Double(limit) * Double(mine) / Double(total)).rounded(.down)))
    }

    /// Sets each rate-limited key's share on this node's engine, until cancelled.
    func run() async {
        while !Task.isCancelled {
            await apply()
            try? await Task.sleep(for: Self.interval)
        }
    }

    func apply() async {
        let limits = keys.limits(\.maxBytesPerSecond)
        guard !limits.isEmpty else { return }
        let running: [String: [String: Int]]
        do {
            running = try await store.downloadingJobs(ofKeys: limits.keys.sorted())
        } catch {
            logger.warning("cannot read where API keys' jobs run (maxBytesPerSecond)", metadata: ["error": "\(error)"])
            return
        }
        for (key, limit) in limits {
            let byNode = running[key] ?? [:]
            let total = byNode.values.reduce(0, +)
            engine.setGroupRate(Self.share(of: limit, mine: byNode[node] ?? 0, total: total), group: key)
        }
    }
}
