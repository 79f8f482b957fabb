import FerryStore
import Synchronization

/// The supervisor's table of jobs and their live rates, readable from any thread.
///
/// Owner: `JobSupervisor`, which makes every change, from the actor only (so the table changes in
/// the supervisor's order, and it stays the only place job state changes). Any thread may read one
/// job with `entry(_:)` without waiting for the actor, e.g. `GET /api/v1/jobs/{id}` answered on a
/// connection queue. The lock is held only to copy a value in or out. A reader sees every change
/// the supervisor made before the read; a job and its rates are two writes, so a read between them
/// can pair the new rates with the previous record (a speed of 0 for a moment, never a wrong state).
final class JobTable: Sendable {
    private struct Contents {
        var jobs: [String: JobRecord] = [:]
        var rates: [String: LiveRates] = [:]
        /// With several nodes, the node running each job that has one.
        var nodes: [String: String] = [:]
    }

    private let contents = Mutex(Contents())

    init() {}

    /// A job and its live rates, from any thread.
    func entry(_ id: String) -> (JobRecord, LiveRates?)? {
        contents.withLock { contents in
            guard let job = contents.jobs[id] else { return nil }
            return (job, contents.rates[id])
        }
    }

    /// Every job's live rates by id (a copy), from any thread.
    func ratesByID() -> [String: LiveRates] {
        contents.withLock { $0.rates }
    }

    /// The node running a job (several nodes), from any thread.
    func node(of id: String) -> String? {
        contents.withLock { $0.nodes[id] }
    }

    /// Records which node runs `id` (nil: none). Changes only from the supervisor.
    func setNode(_ node: String?, of id: String) {
        contents.withLock { $0.nodes[id] = node }
    }

    /// Replaces the nodes of every job but `keeping` ones. Changes only from the supervisor.
    func setNodes(_ nodes: [String: String], keeping kept: Set<String>) {
        contents.withLock { contents in
            var merged = nodes
            for id in kept { merged[id] = contents.nodes[id] }
            contents.nodes = merged
        }
    }

    /// The records, as a dictionary-like view (the supervisor's `jobs`).
    var jobs: Jobs { Jobs(table: self) }
    /// The live rates of running transfers, as a dictionary-like view (the supervisor's `rates`).
    var rates: Rates { Rates(table: self) }

    /// Job records by id. Changes only from the supervisor.
    struct Jobs {
        fileprivate let table: JobTable

        subscript(id: String) -> JobRecord? {
            get { table.contents.withLock { $0.jobs[id] } }
            nonmutating set { table.contents.withLock { $0.jobs[id] = newValue } }
        }

        /// A copy of every record (cheap until the table next changes).
        var values: [String: JobRecord].Values { table.contents.withLock { $0.jobs.values } }

        @discardableResult
        func updateValue(_ job: JobRecord, forKey id: String) -> JobRecord? {
            table.contents.withLock { $0.jobs.updateValue(job, forKey: id) }
        }

        @discardableResult
        func removeValue(forKey id: String) -> JobRecord? {
            table.contents.withLock { $0.jobs.removeValue(forKey: id) }
        }

        /// Room for `count` records without growing (recovery knows how many it adds).
        func reserveCapacity(_ count: Int) {
            table.contents.withLock { $0.jobs.reserveCapacity(count) }
        }
    }

    /// Live rates by job id. Changes only from the supervisor.
    struct Rates {
        fileprivate let table: JobTable

        subscript(id: String) -> LiveRates? {
            get { table.contents.withLock { $0.rates[id] } }
            nonmutating set { table.contents.withLock { $0.rates[id] = newValue } }
        }

        var values: [String: LiveRates].Values { table.contents.withLock { $0.rates.values } }
    }
}
