/// How one `OutgoingRequest` ended.
public enum RequestOutcome: Sendable, Equatable {
    /// The server answered with this status (any status: what it means is the caller's business).
    case answered(status: Int)
    /// The destination guard refused every address the name resolved to; the reason says which rule.
    case refused(String)
    /// No answer: DNS, connection, TLS, timeout, or Ferry shutting down. The message names libcurl's error.
    case failed(String)
}
