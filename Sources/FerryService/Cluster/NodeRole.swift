import FerryStore

/// What the supervisor of one node among several needs to know of the cluster: the shared store, its own id and
/// lease, and how to ask for more work. Nil on a single node (SQLite, or PostgreSQL used by one node the same way).
/// Made by `RunningService+Cluster`; used by `JobSupervisor+Cluster`.
struct NodeRole: Sendable {
    var store: any ClusterJobStore
    var node: String
    var lease: Duration
    /// Asks the node's `LeaseKeeper` to claim jobs now (a slot freed, a job became runnable).
    var wantsWork: @Sendable () -> Void
    /// How long an action forwarded to the owner of a job may take to become visible here.
    var forwardTimeout: Duration = .seconds(5)
}

/// An action on a job owned by another node, as sent to that node (`ClusterJobStore.send(command:to:)`):
/// `<verb> <job id>`. Pure.
enum ForwardedAction: String, Sendable, CaseIterable {
    case pause, resume, cancel, delete

    var command: (String) -> String { { id in "\(self.rawValue) \(id)" } }

    /// Whether the job as read back (nil: deleted) shows this action done, so that the forwarding node may answer.
    func isVisible(in job: JobRecord?) -> Bool {
        guard let job else { return true }
        return switch self {
        case .pause: !job.state.needsRunning
        case .resume: job.state.needsRunning || job.state == .finished
        case .cancel: job.state == .cancelled || job.state == .finished
        case .delete: false
        }
    }

    /// The action and job id of a command; nil for anything else.
    static func parse(_ command: String) -> (ForwardedAction, String)? {
        let parts = command.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let action = ForwardedAction(rawValue: String(parts[0])) else { return nil }
        return (action, String(parts[1]))
    }
}
