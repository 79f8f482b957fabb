import FerryCore
import CCurl

/// What went wrong in one attempt, as the transfer observed it.
enum FailureCause: Equatable, Sendable {
    /// libcurl ended the transfer with this code.
    case curl(code: Int32, detail: String)
    /// The origin's final answer was an error status.
    case httpStatus(Int, retryAfter: Double?)
    /// A connection to a forbidden address was refused (the destination guard).
    case forbiddenDestination(String)
    /// An SFTP server's host key is not in the known-hosts file, or differs from the one there.
    case hostKeyRejected(String)
    /// Writing the partial file failed.
    case write(SystemError)
    /// The file is larger than allowed.
    case tooLarge(String)
    /// The file does not fit in the spool's quota (`SpoolAllowance`).
    case quotaExceeded(String)
    /// The finished file's digest (`actual`, hex, of `expected`'s algorithm) is not the one the job asked for.
    case checksumMismatch(expected: Checksum, actual: String)
    /// The origin kept answering in ways that cannot be used (e.g. wrong ranges after restarts).
    case unusableResponse(String)
    case internalError(String)
}
