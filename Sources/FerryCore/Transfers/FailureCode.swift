/// A failure's stable code, as API.md lists them.
///
/// Compared by its named constants (`failure.code == .checksumMismatch`), never by spelling. The set is open so that
/// a client reading a newer server keeps a code it does not know as it is.
public struct FailureCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    /// The origin answered 4xx/5xx (with `httpStatus`).
    public static let httpError = FailureCode(rawValue: "http_error")
    public static let networkError = FailureCode(rawValue: "network_error")
    public static let timeout = FailureCode(rawValue: "timeout")
    public static let tooManyRedirects = FailureCode(rawValue: "too_many_redirects")
    public static let checksumMismatch = FailureCode(rawValue: "checksum_mismatch")
    public static let fileTooLarge = FailureCode(rawValue: "file_too_large")
    public static let quotaExceeded = FailureCode(rawValue: "quota_exceeded")
    public static let forbiddenDestination = FailureCode(rawValue: "forbidden_destination")
    public static let unsupportedScheme = FailureCode(rawValue: "unsupported_scheme")
    public static let invalidURL = FailureCode(rawValue: "invalid_url")
    /// An SFTP server's host key is not in `--ssh-known-hosts`, or differs from the one there.
    public static let hostKeyUnknown = FailureCode(rawValue: "host_key_unknown")
    public static let internalError = FailureCode(rawValue: "internal")
    /// The onward delivery failed: the target refused the file, or the retries ran out.
    public static let deliveryFailed = FailureCode(rawValue: "delivery_failed")
    /// A mirror was dropped: its length or validator differs from the first source's (another version of the file).
    public static let sourceMismatch = FailureCode(rawValue: "source_mismatch")
    /// A waiting job's reason: free space is below the reserve.
    public static let diskFull = FailureCode(rawValue: "disk_full")
    /// A waiting job's reason: a back-off after a retryable failure.
    public static let retrying = FailureCode(rawValue: "retrying")

    /// Every code the service sends today.
    public static let known: [FailureCode] = [
        .httpError, .networkError, .timeout, .tooManyRedirects, .checksumMismatch, .fileTooLarge, .quotaExceeded,
        .forbiddenDestination, .unsupportedScheme, .invalidURL, .hostKeyUnknown, .internalError, .deliveryFailed,
        .sourceMismatch, .diskFull, .retrying,
    ]
}
