/// How the body of a request is delimited.
public enum BodyFraming: Sendable, Equatable {
    case none
    case length(Int)
    case chunked
}
