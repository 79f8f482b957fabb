import CCurl
import Dispatch
import FerryCore

/// Speed limits. Everything here runs on `queue`.
///
/// libcurl's own limit (`CURLOPT_MAX_RECV_SPEED_LARGE`) is not used: it drains up to 100 receive buffers from a
/// socket before it checks, then sleeps off the excess over a 3-second window, so a limited job came in bursts
/// with stalls of many seconds between them. Instead each body chunk asks the token buckets before it is taken
/// (`mayReceive`): the transfer's own (`maxBytesPerSecond`, shared by its connections), its group's (an API key's
/// `maxBytesPerSecond`, shared by that key's transfers) and the engine's (`globalMaxBytesPerSecond`, shared by every
/// transfer). When either is empty the connection is paused
/// (`CURL_WRITEFUNC_PAUSE`: libcurl keeps the chunk, stops reading the socket, and TCP slows the origin down) and
/// woken when the bucket has refilled. A limited transfer's receive buffer is sized down
/// (`receiveBufferSize(for:)`), so one chunk per connection is a small part of a second's worth of its limit.
extension DownloadEngine {
    /// Whether `connection` may take a body chunk of `count` bytes now. When it may not, the caller returns
    /// `.pause`; the connection is unpaused once the limits allow (it then asks again).
    func mayReceive(_ count: Int, for transfer: Transfer, on connection: SegmentFetch) -> Bool {
        guard let delay = rateDelay(count, own: &transfer.rateBucket, group: transfer.spec.group) else { return true }
        scheduleRateWake(transfer, connection, after: delay)
        return false
    }

    /// Takes `count` bytes from the job's bucket (`own`), its group's and the engine's when all allow them now, and
    /// returns nil; otherwise takes nothing and returns the seconds until they may. Downloads and deliveries both ask it.
    func rateDelay(_ count: Int, own bucket: inout TokenBucket?, group: String? = nil) -> Double? {
        dispatchPrecondition(condition: .onQueue(queue))
        var grouped = group.flatMap { rates.groups[$0] }
        guard bucket != nil || rates.global != nil || grouped != nil else { return nil }
        let now = Self.monotonicSeconds()
        let ownAllows = bucket?.mayPass(now: now) ?? true
        let globalAllows = rates.global?.mayPass(now: now) ?? true
        let groupAllows = grouped?.mayPass(now: now) ?? true
        guard ownAllows && globalAllows && groupAllows else {
            return max(bucket?.delay(now: now) ?? 0, rates.global?.delay(now: now) ?? 0, grouped?.delay(now: now) ?? 0)
        }
        bucket?.take(count, now: now)
        rates.global?.take(count, now: now)
        if let group, grouped != nil { rates.groups[group]?.take(count, now: now) }
        return nil
    }

    private func scheduleRateWake(_ transfer: Transfer, _ connection: SegmentFetch, after delay: Double) {
        guard !connection.waitingForRate else { return }
        connection.waitingForRate = true
        queue.asyncAfter(deadline: .now() + max(0.001, delay)) { [weak self, weak transfer, weak connection] in
            guard let self, let transfer, let connection, connection.waitingForRate else { return }
            connection.waitingForRate = false
            guard transfer.phase == .running, let easy = connection.easy else { return }
            self.multi.unpause(easy)
        }
    }

    /// Sets or clears a transfer's own limit (at submit and on PATCH), keeping what its bucket saved or owes.
    func setRateLimit(_ transfer: Transfer, _ bytesPerSecond: Int64?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let limit = bytesPerSecond, limit > 0 else {
            if transfer.rateBucket != nil { rates.floorsStale = true }  // its connections' floors go back up
            transfer.rateBucket = nil
            return
        }
        let now = Self.monotonicSeconds()
        if transfer.rateBucket != nil {
            transfer.rateBucket?.setRate(limit, now: now)
        } else {
            transfer.rateBucket = TokenBucket(bytesPerSecond: limit, now: now)
        }
    }

    /// libcurl's receive buffer for a new exchange of `transfer`: the configured size, or, under a speed limit,
    /// at most a twentieth of a second's worth of the connection's share of it (1 KiB at least, libcurl's minimum).
    func receiveBufferSize(for transfer: Transfer) -> Int {
        let connections = Int64(max(1, transfer.spec.connections ?? configuration.defaultConnections))
        var shares: [Int64] = []
        if let own = transfer.spec.maxBytesPerSecond, own > 0 { shares.append(own / connections) }
        if let global = configuration.globalMaxBytesPerSecond, global > 0 {
            shares.append(global / (connections * Int64(max(1, configuration.maxConcurrent))))
        }
        guard let share = shares.min() else { return configuration.receiveBufferSize }
        return Int(min(Int64(configuration.receiveBufferSize), max(1024, share / 20)))
    }

    /// The upload buffer of a delivery: the receive buffer's size, or a twentieth of a second of its limit (its own,
    /// or its share of the engine's), at least 16 KiB (libcurl's smallest) and at most 2 MiB (its largest).
    func uploadBufferSize(for spec: DeliverySpec) -> Int {
        var shares: [Int64] = []
        if let own = spec.maxBytesPerSecond, own > 0 { shares.append(own) }
        if let global = configuration.globalMaxBytesPerSecond, global > 0 {
            shares.append(global / Int64(max(1, configuration.maxConcurrent)))
        }
        let size = shares.min().map { min(Int64(configuration.receiveBufferSize), $0 / 20) } ?? Int64(configuration.receiveBufferSize)
        return Int(min(2 << 20, max(16 << 10, size)))
    }

    /// Keeps each running connection's low-speed floor (`CURLOPT_LOW_SPEED_LIMIT`) below what its share of the
    /// limits lets it reach, so a limited connection is never timed out as stalled.
    ///
    /// Called whenever connections or limits change (every start, launch and end: several times per file of a big
    /// batch), so it costs O(active transfers) and nothing when no limit applies: only the scheduler's active
    /// transfers can be running, and with no limit anywhere every connection keeps the floor it was created with
    /// (`configureRequest`), unless a limit was just lifted (`rates.floorsStale`: one pass puts the floors back).
    func applyRateLimits() {
        dispatchPrecondition(condition: .onQueue(queue))
        let running = scheduling.activeIDs.compactMap { id in transfers[id].flatMap { $0.isTransferring ? $0 : nil } }
        let limited = configuration.globalMaxBytesPerSecond != nil || !rates.groups.isEmpty
            || running.contains { $0.rateBucket != nil }
        guard limited || rates.floorsStale else { return }
        rates.floorsStale = false
        let globalShare = configuration.globalMaxBytesPerSecond.map { max(1, $0 / Int64(max(1, running.count))) }
        var runningPerGroup: [String: Int64] = [:]
        for transfer in running { if let group = transfer.spec.group { runningPerGroup[group, default: 0] += 1 } }
        for transfer in running {
            let connections = transfer.segmented?.fetches.values.filter(\.isConnected) ?? []
            let groupShare = transfer.spec.group.flatMap { group in
                rates.groups[group].map { max(1, Int64($0.rate) / max(1, runningPerGroup[group] ?? 1)) }
            }
            let limit = [transfer.spec.maxBytesPerSecond, globalShare, groupShare].compactMap { $0 }.filter { $0 > 0 }.min()
            let each = limit.map { max(1, $0 / Int64(max(1, connections.count))) }
            let floor = each.map { max(1, min(configuration.lowSpeedLimit, Int($0 / 4))) } ?? configuration.lowSpeedLimit
            for connection in connections where connection.appliedLowSpeedFloor != floor {
                guard let easy = connection.easy else { continue }
                connection.appliedLowSpeedFloor = floor
                try? easy.set(CURLOPT_LOW_SPEED_LIMIT, floor)
            }
        }
    }
}
