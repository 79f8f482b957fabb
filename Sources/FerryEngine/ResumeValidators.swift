import FerryCore

/// What an earlier run learned about the file, as reported in `.responded` and stored by the service.
public struct ResumeValidators: Sendable, Equatable {
    /// The origin's ETag header value as received (a weak one is never used for `If-Range`).
    public var etag: String?
    /// The origin's Last-Modified header value as received.
    public var lastModified: String?
    /// The full size of the file, when the origin said it.
    public var bytesExpected: Int64?
    /// The URL after redirects.
    public var finalURL: String?

    public init(etag: String? = nil, lastModified: String? = nil, bytesExpected: Int64? = nil, finalURL: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.bytesExpected = bytesExpected
        self.finalURL = finalURL
    }
}
