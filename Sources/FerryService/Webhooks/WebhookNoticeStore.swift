import FerryStore
import Foundation

/// The part of the job store the webhook sender uses: the outbox's reads and settlements.
protocol WebhookNoticeStore: Sendable {
    func pendingNotices(limit: Int) async throws -> [WebhookNotice]
    func rescheduleNotice(id: String, dueAt: Date, attempts: Int) async throws
    func deleteNotice(id: String) async throws -> Bool
}

/// A `JobStore`'s outbox as a `WebhookNoticeStore`.
struct JobStoreNotices: WebhookNoticeStore {
    let store: any JobStore

    func pendingNotices(limit: Int) async throws -> [WebhookNotice] { try await store.pendingNotices(limit: limit) }
    func rescheduleNotice(id: String, dueAt: Date, attempts: Int) async throws {
        try await store.rescheduleNotice(id: id, dueAt: dueAt, attempts: attempts)
    }
    func deleteNotice(id: String) async throws -> Bool { try await store.deleteNotice(id: id) }
}
