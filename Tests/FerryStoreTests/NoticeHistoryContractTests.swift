import Foundation
import Testing
@testable import FerryStore

/// Notices listed and sent again (schema 11): settled ones stay, by state, job and key, the same on every store.
@Suite("JobStore contract: notice history")
struct NoticeHistoryContractTests {
    @Test(arguments: StoreKind.allCases)
    func noticesAreSettledListedAndSentAgain(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var mine = JobRecord.make("a")
            mine.ownerKey = "k1"
            _ = try await store.insert([mine, .make("b")])
            let notices = (0..<4).map { index in
                WebhookOutboxContractTests.notice("n\(index)", job: index < 3 ? "a" : "b", due: 1_795_000_010,
                                                  created: 1_795_000_000 + Double(index))
            }
            try await store.apply(updates: [], deletions: [], notices: notices)
            let at = Date(timeIntervalSince1970: 1_795_000_100)
            try await store.settleNotices(
                finishing: [NoticeSettlement(id: "n0", state: .delivered, attempts: 1, lastStatus: 204, at: at),
                            NoticeSettlement(id: "n1", state: .failed, attempts: 10, lastStatus: 500, at: at)],
                rescheduling: [WebhookNoticeRetry(id: "n2", dueAt: at, attempts: 2, lastStatus: 503)])
            #expect(try await store.pendingNotices(limit: 10).map(\.id) == ["n3", "n2"])  // soonest due first

            let all = try await store.notices(NoticeFilter(), limit: 10)
            #expect(all.map(\.notice.id) == ["n0", "n1", "n2", "n3"])
            #expect(all.map(\.state) == [.delivered, .failed, .pending, .pending])
            #expect(all.map(\.lastStatus) == [204, 500, 503, nil])
            #expect(all[0].settledAt == at && all[2].settledAt == nil)
            #expect(all[1].notice.attempts == 10 && all[1].notice.body == notices[1].body)
            #expect(try await store.notices(NoticeFilter(state: .failed), limit: 10).map(\.notice.id) == ["n1"])
            #expect(try await store.notices(NoticeFilter(jobID: "b"), limit: 10).map(\.notice.id) == ["n3"])
            #expect(try await store.notices(NoticeFilter(ownerKey: "k1"), limit: 2).map(\.notice.id) == ["n0", "n1"])
            #expect(try await store.notices(NoticeFilter(state: .pending, ownerKey: "k2"), limit: 10).isEmpty)
            #expect(try await store.notice(id: "n1")?.state == .failed)
            #expect(try await store.notice(id: "zz") == nil)

            // Sent again: a failed one is pending once more, due at once, its tries kept; a delivered one is not.
            let now = Date(timeIntervalSince1970: 1_795_000_200)
            let again = try #require(try await store.retryNotice(id: "n1", at: now))
            #expect(again.id == "n1" && again.attempts == 10 && again.dueAt == now)
            #expect(try await store.notice(id: "n1")?.state == .pending)
            #expect(try await store.retryNotice(id: "n0", at: now) == nil)
            #expect(try await store.retryNotice(id: "missing", at: now) == nil)
            #expect(try await store.retryNotice(id: "n2", at: now)?.dueAt == now)
            #expect(try await store.pendingNotices(limit: 1).map(\.id) == ["n3"])

            try await store.purgeSettledNotices(olderThan: at.addingTimeInterval(1))
            #expect(try await store.notices(NoticeFilter(), limit: 10).map(\.notice.id) == ["n1", "n2", "n3"])
        }
    }
}
