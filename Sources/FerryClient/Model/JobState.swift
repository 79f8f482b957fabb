/// A job's state as the API names it. Unknown names (a newer server) are kept as `.other`.
public enum JobState: Sendable, Hashable, CustomStringConvertible {
    case waiting, downloading, delivering, paused, finished, failed, cancelled
    case other(String)

    public init(_ name: String) {
        switch name {
        case "waiting": self = .waiting
        case "downloading": self = .downloading
        case "delivering": self = .delivering
        case "paused": self = .paused
        case "finished": self = .finished
        case "failed": self = .failed
        case "cancelled": self = .cancelled
        default: self = .other(name)
        }
    }

    public var description: String {
        switch self {
        case .waiting: "waiting"
        case .downloading: "downloading"
        case .delivering: "delivering"
        case .paused: "paused"
        case .finished: "finished"
        case .failed: "failed"
        case .cancelled: "cancelled"
        case .other(let name): name
        }
    }

    /// Whether a `--wait` is over for a job in this state: it finished, or it stopped and will not go on by
    /// itself (`failed` gave up; a user may resume it, but nothing will happen until then).
    public var endsWait: Bool { self == .finished || self == .failed || self == .cancelled }
}
