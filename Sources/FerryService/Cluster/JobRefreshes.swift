/// Reads, one batch at a time, the jobs other nodes' commits named (`ferry_jobs` notifications): the ids heard while a
/// read is under way wait and go together in the next one, each once. A burst of commits elsewhere (every file of a
/// batch moves through several states in a second) then costs a few reads of many rows, not a read per commit with
/// the same rows again: the cluster bench read each file's row 8.3 times over its three nodes.
///
/// Owner: this actor owns the ids waiting. `ClusterMembership`'s notification loop calls `heard` and goes on at once;
/// the reads run here, one at a time, in the order heard (a read returns rows as they are then, so a later read of
/// the same id never shows an older row).
actor JobRefreshes {
    private let read: @Sendable ([String]) async -> Void
    private var waiting: [String] = []
    private var waitingSet: Set<String> = []
    private var reading = false

    /// - Parameter read: reads the rows of the ids given and puts them in the table (`JobSupervisor.refresh`), then
    ///   whatever follows a change (`wantsWork`).
    init(read: @escaping @Sendable ([String]) async -> Void) {
        self.read = read
    }

    /// Ids a notification named: read now, or with the next batch when a read is under way.
    func heard(_ ids: [String]) {
        for id in ids where waitingSet.insert(id).inserted { waiting.append(id) }
        guard !reading, !waiting.isEmpty else { return }
        reading = true
        Task { await self.readWaiting() }
    }

    private func readWaiting() async {
        while !waiting.isEmpty {
            let batch = waiting
            waiting = []
            waitingSet = []
            await read(batch)
        }
        reading = false
    }
}
