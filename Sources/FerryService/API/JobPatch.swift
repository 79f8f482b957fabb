import FerryCore
import FerryStore

/// A validated `PATCH /api/v1/jobs/{id}` body.
struct JobPatch: Sendable, Equatable {
    var priority: Int? = nil
    /// `.some(nil)` removes the limit.
    var maxBytesPerSecond: Int64?? = nil
    var url: SubmittedURL? = nil
    /// Replaces the job's tags (validated by `TagList`); `[]` removes them.
    var tags: [String]? = nil

    var isEmpty: Bool { priority == nil && maxBytesPerSecond == nil && url == nil && tags == nil }

    /// Whether `job` has every value this patch sets (a job patched on another node, as read back here).
    func isShown(in job: JobRecord) -> Bool {
        (priority.map { $0 == job.priority } ?? true)
            && (maxBytesPerSecond.map { $0 == job.maxBytesPerSecond } ?? true)
            && (url.map { $0.normalized == job.url } ?? true)
            && (tags.map { $0 == job.tags } ?? true)
    }

    /// Only labels change: allowed in every state (`JobAction.changeTags`).
    var changesOnlyTags: Bool { tags != nil && priority == nil && maxBytesPerSecond == nil && url == nil }
}
