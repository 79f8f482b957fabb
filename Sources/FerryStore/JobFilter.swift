import FerryCore

/// Which jobs `JobStore.list` returns: by state, by tag, by text. Every condition given must hold; `JobFilter()`
/// matches every job.
///
/// `text` is a case-insensitive substring of the job's filename or of its URL as users see it (userinfo written
/// `***@`, so a search never matches a hidden password). Both sides are folded by `searchText(of:)` and
/// `folded(_:)` and compared as UTF-8 bytes, so `SQLiteJobStore` (which keeps `searchText` in a column and
/// compares with `instr`) and `MemoryJobStore` (`matches(_:)`) select exactly the same jobs. A pure value.
public struct JobFilter: Sendable, Equatable {
    /// `nil`: any state; an empty set matches nothing.
    public var states: Set<JobState>?
    /// Jobs carrying exactly this tag (compared as given, case and all).
    public var tag: String?
    /// A substring of the filename or the redacted URL, any case. An empty text matches every job.
    public var text: String?
    /// Jobs of this API key only (`JobRecord.ownerKey`), read from the stores' (owner_key, sequence) index.
    public var ownerKey: String?

    public init(states: Set<JobState>? = nil, tag: String? = nil, text: String? = nil, ownerKey: String? = nil) {
        self.states = states
        self.tag = tag
        self.text = text
        self.ownerKey = ownerKey
    }

    /// Whether a store must look beyond states (the tag index, the search text).
    public var selectsByContent: Bool { tag != nil || !(text ?? "").isEmpty }

    /// Whether `job` passes every condition: the definition the SQL of `SQLiteJobStore` follows.
    public func matches(_ job: JobRecord) -> Bool {
        if let ownerKey, job.ownerKey != ownerKey { return false }
        if let states, !states.contains(job.state) { return false }
        if let tag, !job.tags.contains(tag) { return false }
        if let text, !text.isEmpty {
            return Self.contains(Array(Self.searchText(of: job).utf8), Array(Self.folded(text).utf8))
        }
        return true
    }

    /// What `text` is searched in: the folded filename and the folded redacted URL, one line each (a newline
    /// occurs in neither, so a text without one never matches across them).
    public static func searchText(of job: JobRecord) -> String {
        searchText(filename: job.filename, url: job.url)
    }

    /// `searchText(of:)` from the two fields it reads (`url` as stored, userinfo and all).
    public static func searchText(filename: String?, url: String) -> String {
        folded(filename ?? "") + "\n" + folded(SubmittedURL.redacting(url))
    }

    /// Case folded for comparison: Unicode lower case, no locale.
    public static func folded(_ text: String) -> String {
        text.lowercased()
    }

    /// Whether `needle` occurs in `haystack` byte for byte (SQLite's `instr` on text does the same).
    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count)
        where haystack[start] == needle[0] && haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return true
        }
        return false
    }
}
