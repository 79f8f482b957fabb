import Foundation
import Testing
@testable import FerryStore

/// The webhook outbox every `JobStore` keeps: notices stored with job changes in one transaction, read soonest due
/// first, rescheduled and removed.
@Suite("JobStore contract: webhook outbox")
struct WebhookOutboxContractTests {
    static func notice(_ id: String, job: String = "a", due: Double, created: Double = 1_795_000_000.000_4) -> WebhookNotice {
        WebhookNotice(id: id, jobID: job, type: "job.finished", url: "https://u:p@hooks.example/in",
                      body: Array(#"{"type":"job.finished","data":{"id":"\#(job)"}}"#.utf8),
                      createdAt: Date(timeIntervalSince1970: created), dueAt: Date(timeIntervalSince1970: due))
    }

    @Test(arguments: StoreKind.allCases)
    func noticesAreStoredWithTheJobChangeAndReadSoonestDueFirst(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a"), .make("b")])
            #expect(try await store.pendingNotices(limit: 10).isEmpty)
            let late = Self.notice("n-late", due: 1_795_000_100), soon = Self.notice("n-soon", job: "b", due: 1_795_000_050.000_7)
            try await store.apply(updates: [.make("a", state: .finished)], deletions: ["b"], notices: [late, soon])
            #expect(try await store.job(id: "a")?.state == .finished)
            #expect(try await store.job(id: "b") == nil)
            // A notice outlives its job; bodies and dates come back as written (dates to the millisecond).
            #expect(try await store.pendingNotices(limit: 10) == [soon.storedForm, late.storedForm])
            #expect(try await store.pendingNotices(limit: 1) == [soon.storedForm])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func noticesAloneAreWritten(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.apply(updates: [], deletions: [], notices: [Self.notice("n1", due: 1_795_000_000)])
            #expect(try await store.pendingNotices(limit: 10).map(\.id) == ["n1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDuplicateNoticeFailsTheWholeChange(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a")])
            try await store.apply(updates: [], deletions: [], notices: [Self.notice("n1", due: 1_795_000_000)])
            await #expect(throws: (any Error).self) {
                try await store.apply(updates: [.make("a", state: .failed)], deletions: [],
                                      notices: [Self.notice("n2", due: 1_795_000_000), Self.notice("n1", due: 1_795_000_000)])
            }
            #expect(try await store.job(id: "a")?.state == .waiting)
            #expect(try await store.pendingNotices(limit: 10).map(\.id) == ["n1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func rescheduleMovesANoticeAndDeleteRemovesIt(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = Self.notice("n1", due: 1_795_000_000), second = Self.notice("n2", due: 1_795_000_010)
            try await store.apply(updates: [], deletions: [], notices: [first, second])
            try await store.rescheduleNotice(id: "n1", dueAt: Date(timeIntervalSince1970: 1_795_000_020.000_9), attempts: 3)
            try await store.rescheduleNotice(id: "ghost", dueAt: Date(timeIntervalSince1970: 1), attempts: 1)  // skipped
            let pending = try await store.pendingNotices(limit: 10)
            #expect(pending.map(\.id) == ["n2", "n1"])
            #expect(pending[1].attempts == 3)
            #expect(StoredDate.milliseconds(pending[1].dueAt) == 1_795_000_020_001)
            #expect(pending[1].createdAt == first.storedForm.createdAt)
            #expect(try await store.deleteNotice(id: "n2"))
            #expect(try await store.deleteNotice(id: "n2") == false)
            #expect(try await store.pendingNotices(limit: 10).map(\.id) == ["n1"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func settleDeletesAndReschedulesManyAtOnce(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.apply(updates: [], deletions: [], notices: (1...4).map { Self.notice("n\($0)", due: 1_795_000_000 + Double($0)) })
            try await store.settleNotices(
                deleting: ["n1", "n3", "ghost"],
                rescheduling: [WebhookNoticeRetry(id: "n2", dueAt: Date(timeIntervalSince1970: 1_795_000_100), attempts: 2),
                               WebhookNoticeRetry(id: "gone", dueAt: Date(timeIntervalSince1970: 1), attempts: 1)])
            let pending = try await store.pendingNotices(limit: 10)
            #expect(pending.map(\.id) == ["n4", "n2"])
            #expect(pending[1].attempts == 2 && StoredDate.milliseconds(pending[1].dueAt) == 1_795_000_100_000)
            try await store.settleNotices(deleting: [], rescheduling: [])  // nothing to do
        }
    }

    @Test
    func theOutboxSurvivesReopeningTheDatabase() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-outbox")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        let store = try await SQLiteJobStore(path: path)
        _ = try await store.insert([.makeFull("a")])
        try await store.apply(updates: [], deletions: [], notices: [Self.notice("n1", due: 1_795_000_000)])
        await store.close()
        let reopened = try await SQLiteJobStore(path: path)
        #expect(try await reopened.pendingNotices(limit: 10) == [Self.notice("n1", due: 1_795_000_000).storedForm])
        #expect(try await reopened.job(id: "a")?.notify == "https://user:pw@hooks.example/ferry?k=1")
        await reopened.close()
    }
}
