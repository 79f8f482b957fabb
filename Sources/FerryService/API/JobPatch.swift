import FerryCore

/// A validated `PATCH /api/v1/jobs/{id}` body.
struct JobPatch: Sendable, Equatable {
    var priority: Int?
    /// `.some(nil)` removes the limit.
    var maxBytesPerSecond: Int64??
    var url: SubmittedURL?

    var isEmpty: Bool { priority == nil && maxBytesPerSecond == nil && url == nil }
}
