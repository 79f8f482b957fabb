import FerryCore

/// One source of a job with mirrors (API.md "Downloader options", `sources`): the job's `url` first, then each
/// mirror. Kept with the job so that a dropped source stays dropped across restarts.
public struct JobSource: Sendable, Equatable, Codable {
    /// As submitted and normalized, userinfo kept for the request (views redact it).
    public var url: String
    /// Bytes received from this source (since the download last started from zero).
    public var bytesReceived: Int64
    /// Why it was dropped for this job; nil while active.
    public var error: JobFailure?

    public init(url: String, bytesReceived: Int64 = 0, error: JobFailure? = nil) {
        self.url = url
        self.bytesReceived = bytesReceived
        self.error = error
    }

    public var isActive: Bool { error == nil }
}
