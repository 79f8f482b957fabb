/// One page of `JobStore.list`: jobs in sequence order, and the cursor for the next page (`nil` on the last one).
public struct JobPage: Sendable {
    public var jobs: [JobRecord]
    /// Opaque; pass it back as `after` to get the jobs that follow. `nil` when no job follows.
    public var next: String?

    public init(jobs: [JobRecord], next: String?) {
        self.jobs = jobs
        self.next = next
    }

    /// The largest page `JobStore.list` returns.
    public static let maximumLimit = 1000

    /// A requested page size clamped to `1...maximumLimit`.
    public static func clampedLimit(_ limit: Int) -> Int {
        min(max(limit, 1), maximumLimit)
    }
}
