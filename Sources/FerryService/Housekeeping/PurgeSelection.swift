import FerryStore
import Foundation

/// Which ended jobs a purge removes: pure, so retention and `DELETE /api/v1/jobs?...` share one rule.
///
/// A job is eligible when its state is one of `states` (only ended states: finished, failed,
/// cancelled) and it ended before `cutoff` (its `finishedAt`, else its last change). Eligible jobs
/// are returned oldest first, so a purge that is cut short has removed the oldest.
struct PurgeSelection: Sendable, Equatable {
    /// The states a purge may remove.
    static let endedStates: Set<JobState> = [.finished, .failed, .cancelled]

    var states: Set<JobState>
    var cutoff: Date

    init(states: Set<JobState> = PurgeSelection.endedStates, cutoff: Date) {
        self.states = states
        self.cutoff = cutoff
    }

    /// When `job` ended, for age comparisons.
    static func endedAt(_ job: JobRecord) -> Date { job.finishedAt ?? job.updatedAt }

    func select(_ jobs: [JobRecord]) -> [JobRecord] {
        jobs.filter { states.contains($0.state) && Self.endedAt($0) < cutoff }
            .sorted { (Self.endedAt($0), $0.sequence) < (Self.endedAt($1), $1.sequence) }
    }
}
