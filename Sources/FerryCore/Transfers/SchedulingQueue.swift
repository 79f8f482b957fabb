/// Decides which waiting transfers start next: highest priority first, then oldest (lowest sequence),
/// with a global cap on active transfers and a cap per host.
///
/// Deterministic: the same operations always give the same answers. Ties on priority and sequence (which
/// callers should avoid) fall back to enqueue order. ``nextToStart()`` walks the waiting list in order and
/// skips entries whose host is at its cap, so one busy host never blocks the others.
///
/// Ids are in at most one of the two sets, waiting or active. Enqueuing an id that is already waiting
/// re-queues it with the new values; enqueuing an id that is active is ignored. Hosts are compared
/// case-insensitively. A value type owned by the engine's queue.
public struct SchedulingQueue<ID: Hashable & Sendable>: Sendable {
    private struct Key: Comparable {
        var priority: Int
        var sequence: Int64
        var order: UInt64

        static func < (a: Key, b: Key) -> Bool {
            if a.priority != b.priority { return a.priority > b.priority }
            if a.sequence != b.sequence { return a.sequence < b.sequence }
            return a.order < b.order
        }
    }

    private struct Waiting {
        var host: String
        var key: Key
    }

    /// Waiting ids sorted by key.
    private var order: [(key: Key, id: ID)] = []
    private var waiting: [ID: Waiting] = [:]
    private var active: [ID: String] = [:]
    private var activePerHost: [String: Int] = [:]
    private var nextOrder: UInt64 = 0

    /// Transfers allowed to run at once; lowering it stops nothing, it only delays new starts. At least 0.
    public var maxActive: Int {
        didSet { maxActive = max(maxActive, 0) }
    }

    /// Transfers allowed to run at once against one host. At least 1.
    public var maxPerHost: Int {
        didSet { maxPerHost = max(maxPerHost, 1) }
    }

    /// - Parameters:
    ///   - maxActive: the global cap (negative values count as 0: nothing starts).
    ///   - maxPerHost: the per-host cap (values below 1 count as 1).
    public init(maxActive: Int, maxPerHost: Int) {
        self.maxActive = max(maxActive, 0)
        self.maxPerHost = max(maxPerHost, 1)
    }

    /// Running transfers.
    public var activeCount: Int { active.count }
    /// The running ids (unordered): at most `maxActive`, however long the wait.
    public var activeIDs: Dictionary<ID, String>.Keys { active.keys }
    /// Transfers waiting for a slot.
    public var waitingCount: Int { waiting.count }

    /// Waiting ids in the order they would start (ignoring caps).
    public var waitingIDs: [ID] { order.map(\.id) }
    /// Whether `id` is waiting.
    public func isWaiting(_ id: ID) -> Bool { waiting[id] != nil }
    /// Whether `id` is active.
    public func isActive(_ id: ID) -> Bool { active[id] != nil }
    /// Active transfers against `host`.
    public func activeCount(host: String) -> Int { activePerHost[host.lowercased()] ?? 0 }

    /// Adds `id` to the waiting list (or re-queues it with new values if it is already waiting).
    public mutating func enqueue(_ id: ID, host: String, priority: Int, sequence: Int64) {
        guard active[id] == nil else { return }
        removeWaiting(id)
        let key = Key(priority: priority, sequence: sequence, order: nextOrder)
        nextOrder += 1
        waiting[id] = Waiting(host: host.lowercased(), key: key)
        order.insert((key, id), at: insertionIndex(for: key))
    }

    /// Forgets `id`, waiting or active (an active one frees its slot). Unknown ids are ignored.
    public mutating func remove(_ id: ID) {
        removeWaiting(id)
        finish(id)
    }

    /// Changes the priority of a waiting `id`; active and unknown ids are ignored (priority only orders
    /// the wait). Age and enqueue order are kept.
    public mutating func updatePriority(_ id: ID, _ priority: Int) {
        guard var entry = waiting[id] else { return }
        removeWaiting(id)
        entry.key.priority = priority
        waiting[id] = entry
        order.insert((entry.key, id), at: insertionIndex(for: entry.key))
    }

    /// Marks an active `id` as done, freeing its slot. Ids that are not active (including waiting ones,
    /// which may have been re-queued for a retry) are left alone.
    public mutating func finish(_ id: ID) {
        guard let host = active.removeValue(forKey: id) else { return }
        let count = (activePerHost[host] ?? 1) - 1
        activePerHost[host] = count > 0 ? count : nil
    }

    /// Moves as many waiting ids to active as the caps allow, in queue order, skipping ids whose host is
    /// at its cap, and returns them in that order.
    public mutating func nextToStart() -> [ID] {
        var started: [ID] = []
        var index = 0
        while active.count < maxActive, index < order.count {
            let id = order[index].id
            let host = waiting[id]!.host
            if (activePerHost[host] ?? 0) < maxPerHost {
                order.remove(at: index)
                waiting[id] = nil
                active[id] = host
                activePerHost[host, default: 0] += 1
                started.append(id)
            } else {
                index += 1
            }
        }
        return started
    }

    private mutating func removeWaiting(_ id: ID) {
        guard let entry = waiting.removeValue(forKey: id) else { return }
        let index = insertionIndex(for: entry.key)
        precondition(index < order.count && order[index].id == id, "SchedulingQueue order out of sync")
        order.remove(at: index)
    }

    /// The first index whose key is not less than `key` (binary search).
    private func insertionIndex(for key: Key) -> Int {
        var low = 0, high = order.count
        while low < high {
            let mid = (low + high) / 2
            if order[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
