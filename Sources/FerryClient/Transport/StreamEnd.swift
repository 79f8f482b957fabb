/// How a streamed response ended.
public enum StreamEnd: Sendable, Equatable {
    /// The server ended the body (or the connection).
    case completed
    /// The reader said `.stop`.
    case stopped
}
