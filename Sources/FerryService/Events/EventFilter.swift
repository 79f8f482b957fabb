import Foundation

/// Which jobs a subscriber follows: every job (`GET /api/v1/events`), or a set of job ids
/// (`?jobs=a,b`, or `GET /api/v1/jobs/{id}/events`). A pure value.
public enum EventFilter: Sendable, Equatable {
    case allJobs
    case jobs(Set<String>)

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
        }
    }
}
