/// The outcome of evaluating a `Range` header against a representation of known length.
public enum RangeResult: Equatable, Sendable {
    /// No usable Range (absent, another unit, malformed, or too many ranges): serve the whole representation (200).
    case none
    /// One or more byte ranges to serve (206), clamped to the length, in request order unless coalesced.
    case satisfiable([ClosedRange<Int64>])
    /// Well-formed, but no range overlaps the representation: 416 with `Content-Range: bytes */length`.
    case unsatisfiable
}
