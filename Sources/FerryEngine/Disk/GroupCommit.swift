/// Group commit bookkeeping: items that become ready while a group is being made durable wait, and
/// then all go together in the next group, so one costly durable step (a directory `fsync`) serves
/// many items instead of one.
///
/// A group starts at once when none is running, so an item alone never waits for company; under load,
/// the groups grow by themselves to whatever arrived during the previous step. Pure bookkeeping, no
/// I/O: the owner runs the groups it is handed and reports each end with `groupEnded()`. A value
/// type, confined to its owner (`DownloadEngine` keeps it on the engine queue).
struct GroupCommit<Item> {
    private var waiting: [Item] = []
    /// A group was handed out and has not ended yet.
    private(set) var isRunning = false

    /// Items waiting for the next group.
    var waitingCount: Int { waiting.count }

    /// Adds a ready item. Returns the group to run now (just this item) when none is running, or nil
    /// when the item joins the next group.
    mutating func add(_ item: Item) -> [Item]? {
        guard !isRunning else {
            waiting.append(item)
            return nil
        }
        isRunning = true
        return [item]
    }

    /// The running group is durable. Returns the next group to run (everything that waited), or nil
    /// when nothing waits (then the next `add` starts a group at once).
    mutating func groupEnded() -> [Item]? {
        precondition(isRunning, "groupEnded() without a running group")
        guard !waiting.isEmpty else {
            isRunning = false
            return nil
        }
        let next = waiting
        waiting.removeAll(keepingCapacity: true)
        return next
    }
}
