import FerryCore
import CCurl

/// What to do about a failure.
enum FailureVerdict: Equatable, Sendable {
    /// Try again after the back-off (and at least `retryAfter` seconds when the origin asked for it).
    case retry(JobFailure, retryAfter: Double?)
    /// Wait until free space returns, then continue.
    case waitForSpace(JobFailure)
    /// Stop for good.
    case giveUp(JobFailure)
}

extension FailureVerdict {
    /// The failure itself, whatever is done about it.
    var failure: JobFailure {
        switch self {
        case .retry(let failure, _), .waitForSpace(let failure), .giveUp(let failure): return failure
        }
    }
}
