import FerryCore

/// One of a job's `sources` (a job created with mirrors): its URL, the bytes it gave, and whether it was dropped.
public struct JobSource: Sendable, Equatable, Decodable {
    public var url: String
    public var bytesReceived: Int64
    /// `active` or `dropped`.
    public var state: String
    /// Why it was dropped.
    public var error: JobFailure?

    public init(url: String, bytesReceived: Int64, state: String, error: JobFailure? = nil) {
        self.url = url
        self.bytesReceived = bytesReceived
        self.state = state
        self.error = error
    }
}
