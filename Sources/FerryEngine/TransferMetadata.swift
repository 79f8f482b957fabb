import FerryCore
import Foundation

/// What the origin said about the file, once its response was accepted.
public struct TransferMetadata: Sendable, Equatable {
    /// The URL after redirects.
    public var finalURL: String
    /// The name reserved in the spool ("name (1).ext" after collisions).
    public var filename: String
    public var contentType: String?
    /// Size of the whole file; nil when unknown.
    public var bytesExpected: Int64?
    /// Validators for a later resume, as received.
    public var etag: String?
    public var lastModified: String?
    /// Bytes kept from disk before this response (the resume offset, or the bytes a segmented download already
    /// had; 0 when starting from zero).
    public var offset: Int64
    /// What the origin said about caching the response (`Cache-Control`, `Expires`, `Date`, as received; nil when
    /// absent or not HTTP), for fetch-through's freshness.
    public var caching = CachingHeaders()

    /// The origin's caching headers, as received.
    public struct CachingHeaders: Sendable, Equatable {
        public var cacheControl: String?
        public var expires: String?
        public var date: String?

        public init(cacheControl: String? = nil, expires: String? = nil, date: String? = nil) {
            self.cacheControl = cacheControl
            self.expires = expires
            self.date = date
        }
    }

    public init(finalURL: String, filename: String, contentType: String?, bytesExpected: Int64?, etag: String?, lastModified: String?, offset: Int64) {
        self.finalURL = finalURL
        self.filename = filename
        self.contentType = contentType
        self.bytesExpected = bytesExpected
        self.etag = etag
        self.lastModified = lastModified
        self.offset = offset
    }
}
