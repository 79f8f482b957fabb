/// The answer to a claim.
public enum SpoolClaim: Equatable, Sendable {
    /// The file may grow to `limit` bytes (nil: no limit).
    case granted(limit: Int64?)
    /// It does not fit; the sentence says why.
    case refused(String)
}
