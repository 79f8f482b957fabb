/// Why a client command failed. `description` is the sentence printed to stderr; `exitStatus` is what
/// the process exits with.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Ferry answered with its error body `{"error": {"code", "message"}}`.
    case api(status: Int, code: String, message: String)
    /// Ferry answered something that is not the API's error shape (a proxy page, an empty body).
    case unexpectedResponse(status: Int, detail: String)
    /// No HTTP answer at all: connection refused, timeout, reset. `detail` is libcurl's message.
    case transport(url: String, detail: String)
    /// The command line or the settings are wrong.
    case usage(String)
    /// A local file operation failed: the call, the path and errno's text.
    case file(call: String, path: String, reason: String)
    /// The downloaded file's SHA-256 is not the job's.
    case checksumMismatch(path: String, expected: String, actual: String)
    /// Something the client cannot go on with (a malformed event, a job that is not finished).
    case failed(String)

    public var description: String {
        switch self {
        case let .api(status, code, message):
            return "\(message) [\(code), HTTP \(status)]"
        case let .unexpectedResponse(status, detail):
            return "unexpected answer from Ferry (HTTP \(status))\(detail.isEmpty ? "" : ": \(detail)")"
        case let .transport(url, detail):
            return "cannot reach Ferry at \(url): \(detail)"
        case let .usage(message):
            return message
        case let .file(call, path, reason):
            return "\(call) '\(path)' failed: \(reason)"
        case let .checksumMismatch(path, expected, actual):
            return "'\(path)' has SHA-256 \(actual), but the job's is \(expected) [checksum_mismatch]"
        case let .failed(message):
            return message
        }
    }

    /// The API error code when Ferry gave one.
    public var code: String? {
        if case let .api(_, code, _) = self { return code }
        if case .checksumMismatch = self { return "checksum_mismatch" }
        return nil
    }

    /// 64 (`EX_USAGE`, what swift-argument-parser uses for a bad command line) for usage errors, 1 for
    /// everything else.
    public var exitStatus: Int32 {
        if case .usage = self { return 64 }
        return 1
    }
}
