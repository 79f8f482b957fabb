import FerryCore

/// One URL a download may take bytes from: the job's `url`, or one of its `mirrors` (API.md "Downloader
/// options"). The engine spreads a split download's segments over the active sources and drops a source that
/// fails or that serves another version of the file; the others carry on.
public struct TransferSource: Sendable, Equatable {
    public var url: SubmittedURL
    /// Bytes received from this source so far (reported back in `TransferProgress.sourceBytes`).
    public var bytesReceived: Int64
    /// Why it was dropped; nil while it is active.
    public var dropped: JobFailure?

    public init(url: SubmittedURL, bytesReceived: Int64 = 0, dropped: JobFailure? = nil) {
        self.url = url
        self.bytesReceived = bytesReceived
        self.dropped = dropped
    }

    public var isActive: Bool { dropped == nil }
}
