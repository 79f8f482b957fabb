/// The client's picture of a set of jobs, kept current by events: what `watch` draws and what
/// `add --wait` waits on. Pure value.
///
/// A board either tracks every job (`watch`) or only the ids it was given (`add --wait`): events about other
/// jobs are ignored then. Jobs keep the order in which the board first saw them.
public struct JobBoard: Sendable {
    /// What an event did to the board.
    public enum Change: Sendable, Equatable {
        /// A job appeared or changed state (or was restarted).
        case state(String)
        /// Only a job's numbers moved.
        case progress(String)
        /// A job was deleted.
        case removed(String)
        /// Nothing the board shows changed.
        case none
    }

    private var jobsByID: [String: Job] = [:]
    private(set) public var order: [String] = []
    private var ordered: Set<String> = []
    /// Ids deleted while the board tracked them.
    private(set) public var removedIDs: Set<String> = []
    private let tracked: Set<String>?

    /// A board for every job (`tracking` nil), or only for the given ids.
    public init(tracking ids: [String]? = nil) {
        tracked = ids.map(Set.init)
        if let ids {
            for id in ids where !ordered.contains(id) {
                order.append(id)
                ordered.insert(id)
            }
        }
    }

    public subscript(id: String) -> Job? { jobsByID[id] }

    /// The jobs in board order (tracked ids not yet seen are left out).
    public var jobs: [Job] { order.compactMap { jobsByID[$0] } }

    /// Replaces what the board knows with a fresh listing (after a `reset`, or at start).
    public mutating func load(_ jobs: [Job]) {
        if tracked == nil {
            let listed = Set(jobs.map(\.id))
            order.removeAll { !listed.contains($0) }
            ordered = ordered.intersection(listed)
            for id in jobsByID.keys where !listed.contains(id) { jobsByID[id] = nil }
        }
        for job in jobs { _ = put(job) }
    }

    /// Applies one event and says what changed.
    public mutating func apply(_ event: JobEvent) -> Change {
        switch event {
        case .job(let job, let restarted):
            guard admits(job.id) else { return .none }
            let before = jobsByID[job.id]
            _ = put(job)
            if before == nil || before?.state != job.state || restarted { return .state(job.id) }
            return before == job ? .none : .progress(job.id)
        case .progress(let update):
            guard admits(update.id), var job = jobsByID[update.id] else { return .none }
            // Numbers of a job that has ended are final in its terminal `job` event.
            guard !job.state.endsWait else { return .none }
            let before = job
            job.apply(update)
            jobsByID[update.id] = job
            return before == job ? .none : .progress(update.id)
        case .removed(let id):
            guard admits(id) else { return .none }
            jobsByID[id] = nil
            removedIDs.insert(id)
            if tracked == nil {
                order.removeAll { $0 == id }
                ordered.remove(id)
            }
            return .removed(id)
        case .reset, .other:
            return .none
        }
    }

    /// For a tracking board: whether every tracked job has ended (finished, failed, cancelled or removed).
    public var allEnded: Bool {
        order.allSatisfy { id in removedIDs.contains(id) || (jobsByID[id]?.state.endsWait ?? false) }
    }

    /// For a tracking board: whether every tracked job finished.
    public var allFinished: Bool {
        order.allSatisfy { jobsByID[$0]?.state == .finished && !removedIDs.contains($0) }
    }

    private func admits(_ id: String) -> Bool { tracked?.contains(id) ?? true }

    private mutating func put(_ job: Job) -> Bool {
        guard admits(job.id) else { return false }
        if !ordered.contains(job.id) {
            order.append(job.id)
            ordered.insert(job.id)
        }
        jobsByID[job.id] = job
        removedIDs.remove(job.id)
        return true
    }
}
