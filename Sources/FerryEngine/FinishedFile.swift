import FerryCore
import Foundation

/// A finished file.
public struct FinishedFile: Sendable, Equatable {
    public var filename: String
    /// Absolute path in `files/`.
    public var path: String
    public var size: Int64
    /// SHA-256, lowercase hex; nil when it is not yet known (`TransferEvent.digested` brings it).
    public var sha256: String?
    public var contentType: String?
    public var finalURL: String
    public var etag: String?
    public var lastModified: String?
    /// Bytes received from each source, for a job with mirrors (`TransferSpec.sources` order); else empty.
    public var sourceBytes: [Int64] = []

    public init(filename: String, path: String, size: Int64, sha256: String?, contentType: String?, finalURL: String, etag: String?, lastModified: String?) {
        self.filename = filename
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.contentType = contentType
        self.finalURL = finalURL
        self.etag = etag
        self.lastModified = lastModified
    }
}
