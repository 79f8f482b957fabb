import FerryStore
import Foundation

/// The part of the job store the webhook sender uses: the outbox's reads and settlements.
protocol WebhookNoticeStore: Sendable {
    func pendingNotices(limit: Int) async throws -> [WebhookNotice]
    /// Delivered and failed notices stay (listed, sent again); retried ones get their next due time.
    func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) async throws
}

/// A `JobStore`'s outbox as a `WebhookNoticeStore`.
struct JobStoreNotices: WebhookNoticeStore {
    let store: any JobStore

    func pendingNotices(limit: Int) async throws -> [WebhookNotice] { try await store.pendingNotices(limit: limit) }
    func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) async throws {
        try await store.settleNotices(finishing: finishing, rescheduling: rescheduling)
    }
}
