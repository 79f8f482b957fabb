import FerryCore

/// A validated `PATCH /api/v1/jobs/{id}` body.
struct JobPatch: Sendable, Equatable {
    var priority: Int?
    /// `.some(nil)` removes the limit.
    var maxBytesPerSecond: Int64??
    var url: SubmittedURL?
    /// Replaces the job's tags (validated by `TagList`); `[]` removes them.
    var tags: [String]?

    var isEmpty: Bool { priority == nil && maxBytesPerSecond == nil && url == nil && tags == nil }

    /// Only labels change: allowed in every state (`JobAction.changeTags`).
    var changesOnlyTags: Bool { tags != nil && priority == nil && maxBytesPerSecond == nil && url == nil }
}
