import FerryStore
import Foundation

/// The part of the job store the webhook sender uses: the outbox's reads and settlements.
protocol WebhookNoticeStore: Sendable {
    func pendingNotices(limit: Int) async throws -> [WebhookNotice]
    func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws
}

/// A `JobStore`'s outbox as a `WebhookNoticeStore`.
struct JobStoreNotices: WebhookNoticeStore {
    let store: any JobStore

    func pendingNotices(limit: Int) async throws -> [WebhookNotice] { try await store.pendingNotices(limit: limit) }
    func settleNotices(deleting: [String], rescheduling: [WebhookNoticeRetry]) async throws {
        try await store.settleNotices(deleting: deleting, rescheduling: rescheduling)
    }
}
