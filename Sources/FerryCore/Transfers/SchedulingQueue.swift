/// Decides which waiting transfers start next: the slots are shared round-robin between groups (API keys) with
/// waiting transfers; within a group, highest priority first, then oldest (lowest sequence); with a global cap on
/// active transfers, a cap per host and, for a group that has one, a cap per group (a key's `maxActiveJobs`).
///
/// Deterministic: the same operations always give the same answers. Ties on priority and sequence (which
/// callers should avoid) fall back to enqueue order. ``nextToStart()`` serves the groups with waiting transfers in
/// turn (one start each per round; the turn carries over between calls), walking each group's waiting list in order
/// and skipping entries whose host is at its cap, so neither one busy host nor one group's 10,000 waiting transfers
/// hold back the others. Finding the group to serve costs O(groups with waiting transfers) per free slot. With one
/// group (every transfer `nil`, the administrator's), it is the plain priority order.
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
        var group: String?
    }

    /// Each group's waiting ids, sorted by key.
    private var queues: [String?: [(key: Key, id: ID)]] = [:]
    /// The groups with waiting ids, in turn order; `turn` is the next to serve.
    private var ring: [String?] = []
    private var turn = 0
    private var waiting: [ID: Waiting] = [:]
    private var active: [ID: (host: String, group: String?)] = [:]
    private var activePerHost: [String: Int] = [:]
    private var activePerGroup: [String?: Int] = [:]
    private var groupCaps: [String: Int] = [:]
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
    public var activeIDs: Dictionary<ID, (host: String, group: String?)>.Keys { active.keys }
    /// Transfers waiting for a slot.
    public var waitingCount: Int { waiting.count }

    /// Waiting ids by priority and age over every group (ignoring caps and turns).
    public var waitingIDs: [ID] { queues.values.flatMap { $0 }.sorted { $0.key < $1.key }.map(\.id) }
    /// Whether some waiting id is for `host` (whatever its turn).
    public func isWaiting(host: String) -> Bool {
        let host = host.lowercased()
        return waiting.values.contains { $0.host == host }
    }
    /// Whether `id` is waiting.
    public func isWaiting(_ id: ID) -> Bool { waiting[id] != nil }
    /// Whether `id` is active.
    public func isActive(_ id: ID) -> Bool { active[id] != nil }
    /// Active transfers against `host`.
    public func activeCount(host: String) -> Int { activePerHost[host.lowercased()] ?? 0 }
    /// Active transfers of `group`.
    public func activeCount(group: String?) -> Int { activePerGroup[group] ?? 0 }

    /// Caps the transfers of `group` running at once (nil: no cap of its own). Lowering it stops nothing.
    public mutating func setCap(_ cap: Int?, group: String) {
        groupCaps[group] = cap.map { max($0, 0) }
    }

    /// Adds `id` to the waiting list of `group` (or re-queues it with new values if it is already waiting).
    public mutating func enqueue(_ id: ID, host: String, priority: Int, sequence: Int64, group: String? = nil) {
        guard active[id] == nil else { return }
        removeWaiting(id)
        let key = Key(priority: priority, sequence: sequence, order: nextOrder)
        nextOrder += 1
        waiting[id] = Waiting(host: host.lowercased(), key: key, group: group)
        insert((key, id), group: group)
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
        insert((entry.key, id), group: entry.group)
    }

    /// Marks an active `id` as done, freeing its slot. Ids that are not active (including waiting ones,
    /// which may have been re-queued for a retry) are left alone.
    public mutating func finish(_ id: ID) {
        guard let (host, group) = active.removeValue(forKey: id) else { return }
        let count = (activePerHost[host] ?? 1) - 1
        activePerHost[host] = count > 0 ? count : nil
        let inGroup = (activePerGroup[group] ?? 1) - 1
        activePerGroup[group] = inGroup > 0 ? inGroup : nil
    }

    /// Moves as many waiting ids to active as the caps allow, one per group in turn, and returns them in the order
    /// started.
    public mutating func nextToStart() -> [ID] {
        var started: [ID] = []
        // Groups in a row that could start nothing (host or group cap): a whole round of them ends the call.
        var idle = 0
        while active.count < maxActive, !ring.isEmpty, idle < ring.count {
            if turn >= ring.count { turn = 0 }
            let group = ring[turn]
            guard let id = startFirst(of: group) else {
                idle += 1
                turn += 1
                continue
            }
            started.append(id)
            idle = 0
            // A group left with nothing waiting leaves the ring (the next group moves into this turn); otherwise the
            // turn passes on.
            if queues[group] == nil { ring.remove(at: turn) } else { turn += 1 }
        }
        return started
    }

    /// Starts the first waiting id of `group` whose host is below its cap, if the group is below its own.
    private mutating func startFirst(of group: String?) -> ID? {
        if let group, let cap = groupCaps[group], (activePerGroup[group] ?? 0) >= cap { return nil }
        // Taken out of the dictionary while changed, so the array is not copied.
        guard var queue = queues.removeValue(forKey: group) else { return nil }
        guard let index = queue.firstIndex(where: { (activePerHost[waiting[$0.id]!.host] ?? 0) < maxPerHost }) else {
            queues[group] = queue
            return nil
        }
        let id = queue.remove(at: index).id
        queues[group] = queue.isEmpty ? nil : queue
        let host = waiting.removeValue(forKey: id)!.host
        active[id] = (host, group)
        activePerHost[host, default: 0] += 1
        activePerGroup[group, default: 0] += 1
        return id
    }

    private mutating func insert(_ entry: (key: Key, id: ID), group: String?) {
        var queue = queues.removeValue(forKey: group) ?? []
        if queue.isEmpty { ring.append(group) }
        queue.insert(entry, at: Self.insertionIndex(for: entry.key, in: queue))
        queues[group] = queue
    }

    private mutating func removeWaiting(_ id: ID) {
        guard let entry = waiting.removeValue(forKey: id), var queue = queues.removeValue(forKey: entry.group) else { return }
        let index = Self.insertionIndex(for: entry.key, in: queue)
        precondition(index < queue.count && queue[index].id == id, "SchedulingQueue order out of sync")
        queue.remove(at: index)
        if !queue.isEmpty {
            queues[entry.group] = queue
        } else if let position = ring.firstIndex(of: entry.group) {
            ring.remove(at: position)
            if position < turn { turn -= 1 }
        }
    }

    /// The first index whose key is not less than `key` (binary search).
    private static func insertionIndex(for key: Key, in queue: [(key: Key, id: ID)]) -> Int {
        var low = 0, high = queue.count
        while low < high {
            let mid = (low + high) / 2
            if queue[mid].key < key { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
