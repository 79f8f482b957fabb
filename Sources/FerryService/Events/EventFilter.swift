import Foundation

/// Which jobs a subscriber follows: every job (`GET /api/v1/events`), or a set of job ids
/// (`?jobs=a,b`, or `GET /api/v1/jobs/{id}/events`). A pure value.
public enum EventFilter: Sendable, Equatable {
    case allJobs
    case jobs(Set<String>)
    /// The jobs of one API key (`ServerEvent.owner`), all of them (nil) or those ids only: a `read` or `write` key's
    /// streams (`JobAccess`).
    case owned(by: String, jobs: Set<String>?)

    /// From the `jobs` query parameter: a comma list of ids, blanks around items and empty items
    /// ignored. Absent, or no id in it: every job.
    public init(jobsQuery: String?) {
        let ids = (jobsQuery ?? "")
            .split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        self = ids.isEmpty ? .allJobs : .jobs(Set(ids))
    }

    /// Whether a subscriber with this filter receives `event`. Events without a job (only `reset`,
    /// which is never queued) pass `allJobs` only.
    public func admits(_ event: ServerEvent) -> Bool {
        switch self {
        case .allJobs: return true
        case .jobs(let ids): return event.jobID.map(ids.contains) ?? false
        case .owned(let key, let ids):
            guard event.owner == key, let jobID = event.jobID else { return false }
            return ids?.contains(jobID) ?? true
        }
    }
}
