import Foundation

/// A notice's next try, as the webhook sender settles it after a failed one (`JobStore.settleNotices`).
public struct WebhookNoticeRetry: Sendable, Equatable {
    public var id: String
    public var dueAt: Date
    /// Tries made so far.
    public var attempts: Int

    public init(id: String, dueAt: Date, attempts: Int) {
        self.id = id
        self.dueAt = dueAt
        self.attempts = attempts
    }
}
