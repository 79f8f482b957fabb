import Foundation

/// One completion notice waiting in the outbox (API.md, "Webhooks"): what to POST where, and when to try next.
///
/// Written in the same transaction as the job change that caused it, so a crash neither loses nor invents one;
/// removed once delivered or given up; rescheduled (`dueAt`, `attempts`) after each failed try. The body is fixed
/// when the notice is made, so every retry sends the same bytes under the same `id`. Dates are kept to the
/// millisecond, like a job's (`StoredDate`).
public struct WebhookNotice: Sendable, Equatable, Codable {
    /// The `webhook-id` header: unique per notice, the same on every retry.
    public var id: String
    public var jobID: String
    /// `job.finished`, `job.failed`, `job.cancelled`, `job.delivering`.
    public var type: String
    /// Where it is POSTed: the job's `notify` or the global `--webhook-url` (userinfo kept).
    public var url: String
    /// The JSON body, `{"type", "timestamp", "data"}`.
    public var body: [UInt8]
    public var createdAt: Date
    /// When the next try is due.
    public var dueAt: Date
    /// Tries made so far.
    public var attempts: Int

    public init(id: String, jobID: String, type: String, url: String, body: [UInt8], createdAt: Date,
                dueAt: Date? = nil, attempts: Int = 0) {
        self.id = id
        self.jobID = jobID
        self.type = type
        self.url = url
        self.body = body
        self.createdAt = createdAt
        self.dueAt = dueAt ?? createdAt
        self.attempts = attempts
    }

    /// The notice as a store gives it back: dates to the millisecond.
    public var storedForm: WebhookNotice {
        var copy = self
        copy.createdAt = StoredDate.normalize(createdAt)
        copy.dueAt = StoredDate.normalize(dueAt)
        return copy
    }
}
