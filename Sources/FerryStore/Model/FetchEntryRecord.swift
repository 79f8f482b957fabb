import Foundation

/// Fetch-through's record of one cached file (API.md, "Fetch-through"; schema 10): the job holding the file of a
/// cache key, until when it is fresh, until when it may stand in for an origin that cannot be reached, how long the
/// origin's answers stay fresh, and when it was last served (for eviction). Files the origin said not to keep
/// (`no-store`, `private`) have none. The validators are the job's own (`etag`, `lastModified`).
///
/// Pure value; dates are kept to the millisecond, as `StoredDate` does.
public struct FetchEntryRecord: Sendable, Equatable {
    public var jobID: String
    public var cacheKey: String
    public var freshUntil: Date
    public var staleIfErrorUntil: Date
    /// Seconds fresh after each answer of the origin (its `Cache-Control`/`Expires`, else `--fetch-max-age`; 0 for
    /// `no-cache`), kept to the millisecond.
    public var lifetime: Double
    public var lastUsed: Date

    public init(jobID: String, cacheKey: String, freshUntil: Date, staleIfErrorUntil: Date, lifetime: Double, lastUsed: Date) {
        self.jobID = jobID
        self.cacheKey = cacheKey
        self.freshUntil = freshUntil
        self.staleIfErrorUntil = staleIfErrorUntil
        self.lifetime = lifetime
        self.lastUsed = lastUsed
    }

    /// As a store gives it back: dates and the lifetime on the millisecond grid.
    public var storedForm: FetchEntryRecord {
        FetchEntryRecord(jobID: jobID, cacheKey: cacheKey,
                         freshUntil: StoredDate.date(milliseconds: StoredDate.milliseconds(freshUntil)),
                         staleIfErrorUntil: StoredDate.date(milliseconds: StoredDate.milliseconds(staleIfErrorUntil)),
                         lifetime: Double(Self.milliseconds(lifetime)) / 1000,
                         lastUsed: StoredDate.date(milliseconds: StoredDate.milliseconds(lastUsed)))
    }

    /// `seconds` as whole milliseconds.
    static func milliseconds(_ seconds: Double) -> Int64 {
        Int64((min(seconds, 1e15) * 1000).rounded())
    }
}
