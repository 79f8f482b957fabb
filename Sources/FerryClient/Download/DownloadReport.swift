/// What `ferry get` did.
public struct DownloadReport: Sendable, Equatable {
    public var path: String
    /// The file's size.
    public var bytes: Int64
    /// Bytes that were already on disk and kept (0 when the download started over).
    public var resumedFrom: Int64
    /// Bytes received from Ferry this time.
    public var transferred: Int64
    public var sha256: String
}
