import FerryCore
import Foundation

/// Everything Ferry knows about a job, as stored. Bytes on disk are the truth for progress; `bytesReceived` here
/// is a hint.
///
/// A plain value: whoever holds a copy owns it. The store assigns `sequence` on insert and keeps dates to the
/// millisecond (see `StoredDate`), so a record read back equals `storedForm` of the record written.
///
/// Memory: the fields live in copy-on-write storage (`Core`), so a record is one pointer wherever it is held (the
/// supervisor's table, an event, a page, the array recovery reads) and copies share it until one of them changes
/// a field. Fields most jobs leave unset while they wait (request headers, validators, resume data, what a
/// download found out) live in a second object (`Extra`) that exists only once one of them is set. A waiting
/// job costs one 144-byte allocation plus its strings, instead of ~350 bytes inline in every container slot.
public struct JobRecord: Sendable {
    private var core: Core

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
        error: JobFailure? = nil,
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
        let extra = Extra(
            finalURL: finalURL, filename: filename, requestedFilename: requestedFilename, contentType: contentType,
            sha256: sha256, expectedSHA256: expectedSHA256, error: error, maxBytesPerSecond: maxBytesPerSecond,
            connections: connections, headers: headers, etag: etag, lastModified: lastModified,
            resumeData: resumeData, startedAt: startedAt, finishedAt: finishedAt)
        core = Core(
            id: id, sequence: sequence, url: url, dedupeKey: dedupeKey, bytesReceived: bytesReceived,
            attempts: attempts, priority: priority, createdAt: createdAt, updatedAt: updatedAt ?? createdAt,
            extra: extra.isEmpty ? nil : extra, bytesExpected: bytesExpected, state: state)
    }

    // MARK: Fields every job has

    public var id: String {
        get { core.id }
        set { unique().id = newValue }
    }

    /// Assigned by the store on insert: strictly increasing, never reused. List order and cursors follow it.
    public var sequence: Int64 {
        get { core.sequence }
        set { unique().sequence = newValue }
    }

    public var url: String {
        get { core.url }
        set { unique().url = newValue }
    }

    public var state: JobState {
        get { core.state }
        set { unique().state = newValue }
    }

    public var bytesReceived: Int64 {
        get { core.bytesReceived }
        set { unique().bytesReceived = newValue }
    }

    public var bytesExpected: Int64? {
        get { core.bytesExpected }
        set { unique().bytesExpected = newValue }
    }

    public var attempts: Int {
        get { core.attempts }
        set { unique().attempts = newValue }
    }

    public var priority: Int {
        get { core.priority }
        set { unique().priority = newValue }
    }

    /// Jobs for the same normalized URL and headers share it (see `SubmittedURL.dedupeKey`).
    public var dedupeKey: String {
        get { core.dedupeKey }
        set { unique().dedupeKey = newValue }
    }

    public var createdAt: Date {
        get { core.createdAt }
        set { unique().createdAt = newValue }
    }

    public var updatedAt: Date {
        get { core.updatedAt }
        set { unique().updatedAt = newValue }
    }

    // MARK: Fields set on some jobs only

    public var finalURL: String? {
        get { core.extra?.finalURL }
        set { extra(setting: newValue != nil)?.finalURL = newValue }
    }

    /// The name the file has (or will have) on disk, after collision renaming.
    public var filename: String? {
        get { core.extra?.filename }
        set { extra(setting: newValue != nil)?.filename = newValue }
    }

    public var requestedFilename: String? {
        get { core.extra?.requestedFilename }
        set { extra(setting: newValue != nil)?.requestedFilename = newValue }
    }

    public var contentType: String? {
        get { core.extra?.contentType }
        set { extra(setting: newValue != nil)?.contentType = newValue }
    }

    public var sha256: String? {
        get { core.extra?.sha256 }
        set { extra(setting: newValue != nil)?.sha256 = newValue }
    }

    public var expectedSHA256: String? {
        get { core.extra?.expectedSHA256 }
        set { extra(setting: newValue != nil)?.expectedSHA256 = newValue }
    }

    public var error: JobFailure? {
        get { core.extra?.error }
        set { extra(setting: newValue != nil)?.error = newValue }
    }

    public var maxBytesPerSecond: Int64? {
        get { core.extra?.maxBytesPerSecond }
        set { extra(setting: newValue != nil)?.maxBytesPerSecond = newValue }
    }

    public var connections: Int? {
        get { core.extra?.connections }
        set { extra(setting: newValue != nil)?.connections = newValue }
    }

    public var headers: [HeaderField] {
        get { core.extra?.headers ?? [] }
        set { extra(setting: !newValue.isEmpty)?.headers = newValue }
    }

    /// Validators for resuming with `If-Range`.
    public var etag: String? {
        get { core.extra?.etag }
        set { extra(setting: newValue != nil)?.etag = newValue }
    }

    public var lastModified: String? {
        get { core.extra?.lastModified }
        set { extra(setting: newValue != nil)?.lastModified = newValue }
    }

    /// Opaque engine state (segments, later).
    public var resumeData: [UInt8]? {
        get { core.extra?.resumeData }
        set { extra(setting: newValue != nil)?.resumeData = newValue }
    }

    public var startedAt: Date? {
        get { core.extra?.startedAt }
        set { extra(setting: newValue != nil)?.startedAt = newValue }
    }

    public var finishedAt: Date? {
        get { core.extra?.finishedAt }
        set { extra(setting: newValue != nil)?.finishedAt = newValue }
    }

    // MARK: Copy-on-write

    /// The storage, made unique to this value first (copied if another value shares it).
    private mutating func unique() -> Core {
        if !isKnownUniquelyReferenced(&core) { core = core.copy() }
        return core
    }

    /// The extra fields, unique to this value, created when `setting` a value and absent so far;
    /// `nil` when clearing a field that is absent anyway (nothing to do).
    private mutating func extra(setting: Bool) -> Extra? {
        let core = unique()
        if core.extra == nil {
            guard setting else { return nil }
            core.extra = Extra()
        } else if !isKnownUniquelyReferenced(&core.extra) {
            core.extra = core.extra!.copy()
        }
        return core.extra
    }

    /// The fields of every job. Mutated only through `unique()`, i.e. while one value holds it, so sharing it
    /// between values (and threads) is safe: that is what makes the record `Sendable`.
    private final class Core: @unchecked Sendable {
        var id: String
        var sequence: Int64
        var url: String
        var dedupeKey: String
        var bytesReceived: Int64
        var attempts: Int
        var priority: Int
        var createdAt: Date
        var updatedAt: Date
        var extra: Extra?
        // Last, so that the 1-byte state fills the padding after the optional's tag byte.
        var bytesExpected: Int64?
        var state: JobState

        init(id: String, sequence: Int64, url: String, dedupeKey: String, bytesReceived: Int64, attempts: Int,
             priority: Int, createdAt: Date, updatedAt: Date, extra: Extra?, bytesExpected: Int64?, state: JobState) {
            self.id = id
            self.sequence = sequence
            self.url = url
            self.dedupeKey = dedupeKey
            self.bytesReceived = bytesReceived
            self.attempts = attempts
            self.priority = priority
            self.createdAt = createdAt
            self.updatedAt = updatedAt
            self.extra = extra
            self.bytesExpected = bytesExpected
            self.state = state
        }

        func copy() -> Core {
            Core(id: id, sequence: sequence, url: url, dedupeKey: dedupeKey, bytesReceived: bytesReceived,
                 attempts: attempts, priority: priority, createdAt: createdAt, updatedAt: updatedAt, extra: extra,
                 bytesExpected: bytesExpected, state: state)
        }
    }

    /// The fields most waiting jobs leave unset. Same sharing rule as `Core` (mutated only once unique).
    private final class Extra: @unchecked Sendable {
        var finalURL: String?
        var filename: String?
        var requestedFilename: String?
        var contentType: String?
        var sha256: String?
        var expectedSHA256: String?
        var error: JobFailure?
        var maxBytesPerSecond: Int64?
        var connections: Int?
        var headers: [HeaderField]
        var etag: String?
        var lastModified: String?
        var resumeData: [UInt8]?
        var startedAt: Date?
        var finishedAt: Date?

        init(finalURL: String? = nil, filename: String? = nil, requestedFilename: String? = nil,
             contentType: String? = nil, sha256: String? = nil, expectedSHA256: String? = nil,
             error: JobFailure? = nil, maxBytesPerSecond: Int64? = nil, connections: Int? = nil,
             headers: [HeaderField] = [], etag: String? = nil, lastModified: String? = nil,
             resumeData: [UInt8]? = nil, startedAt: Date? = nil, finishedAt: Date? = nil) {
            self.finalURL = finalURL
            self.filename = filename
            self.requestedFilename = requestedFilename
            self.contentType = contentType
            self.sha256 = sha256
            self.expectedSHA256 = expectedSHA256
            self.error = error
            self.maxBytesPerSecond = maxBytesPerSecond
            self.connections = connections
            self.headers = headers
            self.etag = etag
            self.lastModified = lastModified
            self.resumeData = resumeData
            self.startedAt = startedAt
            self.finishedAt = finishedAt
        }

        /// Whether every field has its default (then a record needs no `Extra`).
        var isEmpty: Bool {
            finalURL == nil && filename == nil && requestedFilename == nil && contentType == nil && sha256 == nil
                && expectedSHA256 == nil && error == nil && maxBytesPerSecond == nil && connections == nil
                && headers.isEmpty && etag == nil && lastModified == nil && resumeData == nil && startedAt == nil
                && finishedAt == nil
        }

        func copy() -> Extra {
            Extra(finalURL: finalURL, filename: filename, requestedFilename: requestedFilename,
                  contentType: contentType, sha256: sha256, expectedSHA256: expectedSHA256, error: error,
                  maxBytesPerSecond: maxBytesPerSecond, connections: connections, headers: headers, etag: etag,
                  lastModified: lastModified, resumeData: resumeData, startedAt: startedAt, finishedAt: finishedAt)
        }
    }
}

extension JobRecord: Equatable {
    public static func == (lhs: JobRecord, rhs: JobRecord) -> Bool {
        if lhs.core === rhs.core { return true }
        return lhs.id == rhs.id && lhs.sequence == rhs.sequence && lhs.url == rhs.url && lhs.state == rhs.state
            && lhs.bytesReceived == rhs.bytesReceived && lhs.bytesExpected == rhs.bytesExpected
            && lhs.attempts == rhs.attempts && lhs.priority == rhs.priority && lhs.dedupeKey == rhs.dedupeKey
            && lhs.createdAt == rhs.createdAt && lhs.updatedAt == rhs.updatedAt
            && lhs.finalURL == rhs.finalURL && lhs.filename == rhs.filename
            && lhs.requestedFilename == rhs.requestedFilename && lhs.contentType == rhs.contentType
            && lhs.sha256 == rhs.sha256 && lhs.expectedSHA256 == rhs.expectedSHA256 && lhs.error == rhs.error
            && lhs.maxBytesPerSecond == rhs.maxBytesPerSecond && lhs.connections == rhs.connections
            && lhs.headers == rhs.headers && lhs.etag == rhs.etag && lhs.lastModified == rhs.lastModified
            && lhs.resumeData == rhs.resumeData && lhs.startedAt == rhs.startedAt && lhs.finishedAt == rhs.finishedAt
    }
}

/// The same keyed form a synthesized conformance of the plain struct had: one key per field, absent optionals
/// left out.
extension JobRecord: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, sequence, url, finalURL, state, filename, requestedFilename, bytesReceived, bytesExpected
        case contentType, sha256, expectedSHA256, error, attempts, priority, maxBytesPerSecond, connections
        case headers, dedupeKey, etag, lastModified, resumeData, createdAt, startedAt, finishedAt, updatedAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try c.decode(String.self, forKey: .id),
            sequence: try c.decode(Int64.self, forKey: .sequence),
            url: try c.decode(String.self, forKey: .url),
            finalURL: try c.decodeIfPresent(String.self, forKey: .finalURL),
            state: try c.decode(JobState.self, forKey: .state),
            filename: try c.decodeIfPresent(String.self, forKey: .filename),
            requestedFilename: try c.decodeIfPresent(String.self, forKey: .requestedFilename),
            bytesReceived: try c.decode(Int64.self, forKey: .bytesReceived),
            bytesExpected: try c.decodeIfPresent(Int64.self, forKey: .bytesExpected),
            contentType: try c.decodeIfPresent(String.self, forKey: .contentType),
            sha256: try c.decodeIfPresent(String.self, forKey: .sha256),
            expectedSHA256: try c.decodeIfPresent(String.self, forKey: .expectedSHA256),
            error: try c.decodeIfPresent(JobFailure.self, forKey: .error),
            attempts: try c.decode(Int.self, forKey: .attempts),
            priority: try c.decode(Int.self, forKey: .priority),
            maxBytesPerSecond: try c.decodeIfPresent(Int64.self, forKey: .maxBytesPerSecond),
            connections: try c.decodeIfPresent(Int.self, forKey: .connections),
            headers: try c.decode([HeaderField].self, forKey: .headers),
            dedupeKey: try c.decode(String.self, forKey: .dedupeKey),
            etag: try c.decodeIfPresent(String.self, forKey: .etag),
            lastModified: try c.decodeIfPresent(String.self, forKey: .lastModified),
            resumeData: try c.decodeIfPresent([UInt8].self, forKey: .resumeData),
            createdAt: try c.decode(Date.self, forKey: .createdAt),
            startedAt: try c.decodeIfPresent(Date.self, forKey: .startedAt),
            finishedAt: try c.decodeIfPresent(Date.self, forKey: .finishedAt),
            updatedAt: try c.decode(Date.self, forKey: .updatedAt))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(sequence, forKey: .sequence)
        try c.encode(url, forKey: .url)
        try c.encodeIfPresent(finalURL, forKey: .finalURL)
        try c.encode(state, forKey: .state)
        try c.encodeIfPresent(filename, forKey: .filename)
        try c.encodeIfPresent(requestedFilename, forKey: .requestedFilename)
        try c.encode(bytesReceived, forKey: .bytesReceived)
        try c.encodeIfPresent(bytesExpected, forKey: .bytesExpected)
        try c.encodeIfPresent(contentType, forKey: .contentType)
        try c.encodeIfPresent(sha256, forKey: .sha256)
        try c.encodeIfPresent(expectedSHA256, forKey: .expectedSHA256)
        try c.encodeIfPresent(error, forKey: .error)
        try c.encode(attempts, forKey: .attempts)
        try c.encode(priority, forKey: .priority)
        try c.encodeIfPresent(maxBytesPerSecond, forKey: .maxBytesPerSecond)
        try c.encodeIfPresent(connections, forKey: .connections)
        try c.encode(headers, forKey: .headers)
        try c.encode(dedupeKey, forKey: .dedupeKey)
        try c.encodeIfPresent(etag, forKey: .etag)
        try c.encodeIfPresent(lastModified, forKey: .lastModified)
        try c.encodeIfPresent(resumeData, forKey: .resumeData)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encodeIfPresent(startedAt, forKey: .startedAt)
        try c.encodeIfPresent(finishedAt, forKey: .finishedAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}
