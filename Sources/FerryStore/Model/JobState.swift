/// Where a job is in its life. Stored by its raw value, which is also the API spelling.
public enum JobState: String, Codable, Sendable, CaseIterable {
    /// Queued behind the concurrency limit, or waiting out a retry back-off or for disk space.
    case waiting
    /// A transfer is running.
    case downloading
    /// The file is complete and verified; it is being uploaded to the job's `deliver` target.
    case delivering
    /// Stopped by a user; partial bytes kept.
    case paused
    /// The file is complete, verified and in place.
    case finished
    /// Gave up; partial bytes kept where a resume could use them. Can be resumed.
    case failed
    /// Stopped for good; partial bytes deleted.
    case cancelled

    /// `finished` and `cancelled`: nothing more will happen to the job.
    public var isTerminal: Bool {
        switch self {
        case .finished, .cancelled: true
        case .waiting, .downloading, .delivering, .paused, .failed: false
        }
    }
}
