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
    /// An FTP server sent more than the size it reported (`reported`): the file's first `sent` bytes came
    /// (`complete`: its data ended there; otherwise it sent at least that much). The bytes on disk were judged by a
    /// wrong size, so they are discarded: never continued, never finished.
    case sizeUnderstated(reported: Int64, sent: Int64, complete: Bool)
    case internalError(String)
}
