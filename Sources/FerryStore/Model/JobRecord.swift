import Foundation

/// Everything Ferry knows about a job, as stored. Bytes on disk are the truth for progress; `bytesReceived` here
/// is a hint.
///
/// A plain value: whoever holds a copy owns it. The store assigns `sequence` on insert and keeps dates to the
/// millisecond (see `StoredDate`), so a record read back equals `storedForm` of the record written.
public struct JobRecord: Codable, Sendable, Equatable {
    public var id: String
    /// Assigned by the store on insert: strictly increasing, never reused. List order and cursors follow it.
    public var sequence: Int64
    public var url: String
    public var finalURL: String?
    public var state: JobState
    /// The name the file has (or will have) on disk, after collision renaming.
    public var filename: String?
    public var requestedFilename: String?
    public var bytesReceived: Int64
    public var bytesExpected: Int64?
    public var contentType: String?
    public var sha256: String?
    public var expectedSHA256: String?
    public var error: JobError?
    public var attempts: Int
    public var priority: Int
    public var maxBytesPerSecond: Int64?
    public var connections: Int?
    public var headers: [HeaderField]
    /// Jobs for the same normalized URL and headers share it (see `SubmittedURL.dedupeKey`).
    public var dedupeKey: String
    /// Validators for resuming with `If-Range`.
    public var etag: String?
    public var lastModified: String?
    /// Opaque engine state (segments, later).
    public var resumeData: [UInt8]?
    public var createdAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    public var updatedAt: Date

    public init(
        id: String,
        sequence: Int64 = 0,
        url: String,
        finalURL: String? = nil,
        state: JobState = .waiting,
        filename: String? = nil,
        requestedFilename: String? = nil,
        bytesReceived: Int64 = 0,
        bytesExpected: Int64? = nil,
        contentType: String? = nil,
        sha256: String? = nil,
        expectedSHA256: String? = nil,
        error: JobError? = nil,
        attempts: Int = 0,
        priority: Int = 0,
        maxBytesPerSecond: Int64? = nil,
        connections: Int? = nil,
        headers: [HeaderField] = [],
        dedupeKey: String,
        etag: String? = nil,
        lastModified: String? = nil,
        resumeData: [UInt8]? = nil,
        createdAt: Date,
        startedAt: Date? = nil,
        finishedAt: Date? = nil,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.sequence = sequence
        self.url = url
        self.finalURL = finalURL
        self.state = state
        self.filename = filename
        self.requestedFilename = requestedFilename
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.contentType = contentType
        self.sha256 = sha256
        self.expectedSHA256 = expectedSHA256
        self.error = error
        self.attempts = attempts
        self.priority = priority
        self.maxBytesPerSecond = maxBytesPerSecond
        self.connections = connections
        self.headers = headers
        self.dedupeKey = dedupeKey
        self.etag = etag
        self.lastModified = lastModified
        self.resumeData = resumeData
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.updatedAt = updatedAt ?? createdAt
    }
}
