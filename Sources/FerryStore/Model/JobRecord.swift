import FerryCore
import Foundation

/// Everything Ferry knows about a job, as stored. Bytes on disk are the truth for progress; `bytesReceived` here
/// is a hint.
///
/// A plain value: whoever holds a copy owns it. The store assigns `sequence` on insert and keeps dates to the
/// millisecond (see `StoredDate`), so a record read back equals `storedForm` of the record written. Equality and
/// `Codable` are synthesized. A new field is a stored property here or in `Details`, an `init` parameter, and its
/// column (`SQLiteSchema`, `SQLiteJobRow`).
///
/// Memory: the supervisor's table keeps every record (boxed, one allocation each: `JobTable.RecordBox`), so each
/// byte of the record costs a byte per job; each record a job changes is a new one.
/// The fields every job has, and its key, are stored inline (136 bytes); those most jobs leave unset while they wait (`Details`)
/// sit behind one pointer, in a box that copies share and that every record setting none of them shares. The box is
/// an immutable final class (`DetailsBox`) and never changes: setting one of these fields puts a new box in its place. They read
/// and write as the record's own (`job.etag`, through `@dynamicMemberLookup`; inside an extension of the record,
/// `self.etag`). Measured with `bench/`'s store case (100,000 jobs, 150 MB allowed): every field inline (368 bytes)
/// peaked at 220 MB, `Details` inline at 219 MB, this layout at 125 MB.
@dynamicMemberLookup
public struct JobRecord: Sendable, Equatable, Codable {
    public var id: String
    public var url: String
    /// Jobs for the same normalized URL and headers share it (see `SubmittedURL.dedupeKey`).
    public var dedupeKey: String
    /// Assigned by the store on insert: strictly increasing, never reused. List order and cursors follow it.
    public var sequence: Int64
    public var bytesReceived: Int64
    public var attempts: Int
    public var priority: Int
    public var createdAt: Date
    public var updatedAt: Date
    @usableFromInline var details: DetailsBox
    /// The id of the API key that created the job (API.md, "API keys"); nil for the administrator's jobs. Inline:
    /// with keys most jobs have one, and a box of its own per job cost ~500 bytes each (100,000 keyed jobs: +52 MB).
    public var ownerKey: String?
    public var bytesExpected: Int64?
    // Last, so that the 1-byte state fills the padding after the optional's tag byte.
    public var state: JobState

    /// The fields set on some jobs only, read and written as the record's own: `job.filename`.
    public struct Details: Sendable, Equatable, Codable {
        public var finalURL: String?
        /// The name the file has (or will have) on disk, after collision renaming.
        public var filename: String?
        public var requestedFilename: String?
        public var contentType: String?
        public var sha256: String?
        /// The digest the file must have (API `checksum`, or `sha256` as its short form); nil when none was asked.
        public var checksum: Checksum?
        public var error: JobFailure?
        public var maxBytesPerSecond: Int64?
        public var connections: Int?
        public var headers: [HeaderField] = []
        /// The user's labels, in the order given (API: up to 16, 1 to 64 characters each); stores index them for
        /// `JobFilter.tag`.
        public var tags: [String] = []
        /// Where this job's completion notices go (API `notify`, an http or https URL, userinfo kept: the view
        /// redacts it); nil when the job has none.
        public var notify: String?
        /// Where the finished file goes next (API `deliver`), and how far it got; nil for jobs without one.
        public var delivery: Delivery?
        /// The job's sources when it has mirrors (`url` first); nil for jobs without mirrors.
        public var sources: [JobSource]?
        /// The id of the job whose transfer this job shares (a dedupe match that asked for more: API.md, POST
        /// /api/v1/jobs): it downloads nothing itself and gets its own finished file from that job's; nil for a
        /// job with a transfer of its own.
        public var follows: String?
        /// Validators for resuming with `If-Range`.
        public var etag: String?
        public var lastModified: String?
        public var startedAt: Date?
        public var finishedAt: Date?
    }

    // Inlinable, so that at each use the key path is a literal the optimizer turns into a plain field access:
    // through a call it was applied at run time, on a copy of every detail (measured: +9 µs per job rendered).
    @inlinable
    public subscript<Value: Equatable>(dynamicMember field: WritableKeyPath<Details, Value>) -> Value {
        get { details.value[keyPath: field] }
        set {
            // Setting what is there already (`job.error = nil` on a job without one) keeps the box.
            guard details.value[keyPath: field] != newValue else { return }
            var value = details.value
            value[keyPath: field] = newValue
            details = DetailsBox.make(value)
        }
    }

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
        checksum: Checksum? = nil,
        error: JobFailure? = nil,
        attempts: Int = 0,
        priority: Int = 0,
        maxBytesPerSecond: Int64? = nil,
        connections: Int? = nil,
        headers: [HeaderField] = [],
        tags: [String] = [],
        notify: String? = nil,
        delivery: Delivery? = nil,
        sources: [JobSource]? = nil,
        follows: String? = nil,
        dedupeKey: String,
        etag: String? = nil,
        lastModified: String? = nil,
        createdAt: Date,
        startedAt: Date? = nil,
        finishedAt: Date? = nil,
        updatedAt: Date? = nil
    ) {
        self.id = id
        self.url = url
        self.dedupeKey = dedupeKey
        self.sequence = sequence
        self.bytesReceived = bytesReceived
        self.attempts = attempts
        self.priority = priority
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.details = DetailsBox.make(Details(
            finalURL: finalURL, filename: filename, requestedFilename: requestedFilename, contentType: contentType,
            sha256: sha256, checksum: checksum, error: error, maxBytesPerSecond: maxBytesPerSecond,
            connections: connections, headers: headers, tags: tags, notify: notify, delivery: delivery, sources: sources, follows: follows, etag: etag, lastModified: lastModified,
            startedAt: startedAt, finishedAt: finishedAt))
        self.bytesExpected = bytesExpected
        self.state = state
    }

    /// `Details` out of line: one pointer to an immutable box, never changed in place (setting a detail makes a new
    /// box; no uniqueness checks, no copy-on-write). Records with no detail set share one box (`none`).
    @usableFromInline
    final class DetailsBox: Sendable, Equatable, Codable {
        @usableFromInline let value: Details

        static let none = DetailsBox(exactly: Details())

        private init(exactly value: Details) { self.value = value }

        @usableFromInline
        static func make(_ value: Details) -> DetailsBox {
            value == Details() ? .none : DetailsBox(exactly: value)
        }

        @usableFromInline
        static func == (a: DetailsBox, b: DetailsBox) -> Bool { a === b || a.value == b.value }

        // Encoded as the details themselves.
        @usableFromInline required init(from decoder: any Decoder) throws {
            value = try Details(from: decoder)
        }

        @usableFromInline func encode(to encoder: any Encoder) throws {
            try value.encode(to: encoder)
        }
    }
}
