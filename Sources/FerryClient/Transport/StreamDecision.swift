/// Whether a streaming reader wants more.
public enum StreamDecision: Sendable, Equatable {
    case `continue`
    case stop
}
