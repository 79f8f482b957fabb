import Foundation

/// A notice's next try, as the webhook sender settles it after a failed one (`JobStore.settleNotices`).
public struct WebhookNoticeRetry: Sendable, Equatable {
    public var id: String
    public var dueAt: Date
    /// Tries made so far.
    public var attempts: Int
    /// The HTTP status the try got; nil for none (a network error).
    public var lastStatus: Int?

    public init(id: String, dueAt: Date, attempts: Int, lastStatus: Int? = nil) {
        self.id = id
        self.dueAt = dueAt
        self.attempts = attempts
        self.lastStatus = lastStatus
    }
}
