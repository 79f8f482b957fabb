import FerryCore
import Foundation

/// Why a transfer is waiting.
public enum WaitReason: Sendable, Equatable {
    /// Behind the concurrency limits.
    case queued
    /// Backing off after a retryable failure; `attempt` is the number of failed attempts so far.
    case retrying(at: Date, attempt: Int, failure: JobFailure)
    /// Free space is below the reserve, or a write hit ENOSPC; continues when space returns.
    case diskFull
}
