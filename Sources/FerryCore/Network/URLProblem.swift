/// Why a submitted URL was refused. The message is a sentence fragment for users, e.g.
/// `invalid("port 70000 is out of range")`; it never contains the URL's userinfo.
public enum URLProblem: Error, Equatable, Sendable {
    /// Not a usable URL; the message says what is wrong.
    case invalid(String)
    /// A scheme the caller does not accept (the associated value is the scheme, lowercased).
    case unsupportedScheme(String)
}
