/// One page of `GET /api/v1/jobs`.
public struct JobPage: Sendable {
    public var jobs: [Job]
    /// Each job's JSON object as the server sent it (for `--json`), in the same order as `jobs`.
    public var rawJobs: [[UInt8]]
    /// The cursor of the next page, nil on the last.
    public var next: String?
    /// `Ferry-Event-Id`: the last event already reflected in this page.
    public var eventID: Int64?
}
