import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging
import Testing
@testable import FerryService

/// `WebhookSender` over a memory store and a fake transport: every notice sent until settled, none twice once
/// delivered, retries with the same id, 410 ends, the outcome stored.
@Suite("WebhookSender")
struct WebhookSenderTests {
    /// Records each request and answers with the next status of its receiver's plan (then 200).
    final class FakeReceiver: @unchecked Sendable {
        private let lock = NSLock()
        private var plans: [String: [Int]]
        private(set) var sent: [(path: String, id: String, body: [UInt8], signature: String)] = []

        init(plans: [String: [Int]] = [:]) { self.plans = plans }

        func send(_ request: OutgoingRequest) async -> RequestOutcome {
            try? await Task.sleep(nanoseconds: UInt64.random(in: 0...2_000_000))
            return lock.withLock {
                let path = request.url.pathAndQuery
                let header = { (name: String) in request.headers.first { $0.hasPrefix(name + ": ") }.map { String($0.dropFirst(name.count + 2)) } ?? "" }
                sent.append((path, header("webhook-id"), request.body, header("webhook-signature")))
                let status = plans[path]?.isEmpty == false ? plans[path]!.removeFirst() : 200
                return status == 0 ? .failed("connection refused") : .answered(status: status)
            }
        }

        var all: [(path: String, id: String, body: [UInt8], signature: String)] { lock.withLock { sent } }
    }

    static func notice(_ id: String, path: String = "/hook") -> WebhookNotice {
        WebhookNotice(id: id, jobID: "job-" + id, type: "job.finished", url: "https://hooks.example" + path,
                      body: Array(#"{"n":"\#(id)"}"#.utf8), createdAt: Date())
    }

    /// The memory store's outbox, each read taking a few milliseconds (as a busy SQLite store may): tries that
    /// end meanwhile must not be sent again from the read's stale copy.
    struct SlowReads: WebhookNoticeStore {
        let store: MemoryJobStore
        func pendingNotices(limit: Int) async throws -> [WebhookNotice] {
            let notices = await store.pendingNotices(limit: limit)
            try await Task.sleep(nanoseconds: 3_000_000)
            return notices
        }
        func settleNotices(finishing: [NoticeSettlement], rescheduling: [WebhookNoticeRetry]) async throws {
            await store.settleNotices(finishing: finishing, rescheduling: rescheduling)
        }
    }

    static func sender(_ store: MemoryJobStore, _ receiver: FakeReceiver, metrics: ServiceMetrics = ServiceMetrics()) -> WebhookSender {
        WebhookSender(store: SlowReads(store: store), send: { await receiver.send($0) }, key: Array("key".utf8),
                      schedule: WebhookSchedule(base: 0.02), metrics: metrics, logger: Logger(label: "test"))
    }

    static func eventually(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<500 { if await condition() { return true }; try? await Task.sleep(nanoseconds: 10_000_000) }
        return await condition()
    }

    @Test func manyNoticesAreEachDeliveredExactlyOnce() async throws {
        let store = MemoryJobStore(), receiver = FakeReceiver()
        let sender = Self.sender(store, receiver)
        await sender.start()
        // Committed in several batches while the sender runs, as the pipeline does.
        for batch in 0..<10 {
            try await store.apply(updates: [], deletions: [], notices: (0..<50).map { Self.notice("n\(batch)-\($0)") })
            sender.wake()
            try await Task.sleep(nanoseconds: 3_000_000)
        }
        #expect(await Self.eventually { await store.pendingNotices(limit: 10).isEmpty })
        try await Task.sleep(nanoseconds: 100_000_000)
        await sender.stop(closingTransport: {})
        let ids = receiver.all.map(\.id)
        #expect(ids.count == 500)
        #expect(Set(ids).count == 500)
    }

    /// As the commit pipeline does: each batch stored, then handed over in memory; reads of the outbox forced
    /// meanwhile see the same notices. Each is still sent exactly once.
    @Test func noticesHandedOverAndReadFromTheStoreAreEachSentOnce() async throws {
        let store = MemoryJobStore(), receiver = FakeReceiver()
        let sender = Self.sender(store, receiver)
        await sender.start()
        for batch in 0..<20 {
            let notices = (0..<25).map { Self.notice("c\(batch)-\($0)") }
            try await store.apply(updates: [], deletions: [], notices: notices)
            if batch % 3 == 0 { sender.wake() }
            sender.committed(notices)
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...4_000_000))
        }
        #expect(await Self.eventually { await store.pendingNotices(limit: 10).isEmpty })
        try await Task.sleep(nanoseconds: 100_000_000)
        await sender.stop(closingTransport: {})
        let ids = receiver.all.map(\.id)
        #expect(ids.count == 500)
        #expect(Set(ids).count == 500)
    }

    /// More notices stored than slots, one wake-up: a full page read means more may follow, so every one goes out.
    @Test func aBacklogLargerThanTheSlotsIsSentWithoutFurtherWakeUps() async throws {
        let store = MemoryJobStore(), receiver = FakeReceiver()
        try await store.apply(updates: [], deletions: [], notices: (0..<40).map { Self.notice("b\($0)") })
        let sender = WebhookSender(store: SlowReads(store: store), send: { await receiver.send($0) }, key: Array("key".utf8),
                                   schedule: WebhookSchedule(base: 0.02), metrics: ServiceMetrics(), logger: Logger(label: "test"),
                                   concurrency: 4)
        await sender.start()
        #expect(await Self.eventually { await store.pendingNotices(limit: 10).isEmpty })
        await sender.stop(closingTransport: {})
        #expect(Set(receiver.all.map(\.id)).count == 40 && receiver.all.count == 40)
    }

    @Test func failuresAreRetriedWithTheSameIDAndFourTenEndsANotice() async throws {
        let store = MemoryJobStore()
        let receiver = FakeReceiver(plans: ["/flaky": [500, 0, 503], "/gone": [410, 410]])
        let metrics = ServiceMetrics()
        let sender = Self.sender(store, receiver, metrics: metrics)
        try await store.apply(updates: [], deletions: [], notices: [Self.notice("a", path: "/flaky"), Self.notice("b", path: "/gone")])
        await sender.start()
        #expect(await Self.eventually { await store.pendingNotices(limit: 10).isEmpty })
        try await Task.sleep(nanoseconds: 200_000_000)  // several retry periods: nothing more is sent
        await sender.stop(closingTransport: {})
        let flaky = receiver.all.filter { $0.path == "/flaky" }
        #expect(flaky.count == 4 && Set(flaky.map(\.id)) == ["a"])
        #expect(receiver.all.filter { $0.path == "/gone" }.count == 1)
        let signature = try #require(flaky.first?.signature)
        #expect(signature.hasPrefix("v1,"))
        let page = metrics.render(.init(jobsByState: [:], downloadSpeed: 0, subscribers: 0, spoolBytes: 0, freeBytes: nil, openConnections: 0))
        #expect(page.contains(#"ferry_webhook_notices_total{result="retried"} 3"#))
        #expect(page.contains(#"ferry_webhook_notices_total{result="delivered"} 1"#))
        #expect(page.contains(#"ferry_webhook_notices_total{result="gone"} 1"#))
        #expect(page.contains(#"ferry_webhook_notices_total{result="failed"} 0"#))
    }

    @Test func aNoticeNotYetDueWaitsAndItsTriesAreStored() async throws {
        let store = MemoryJobStore(), receiver = FakeReceiver(plans: ["/down": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])
        var later = Self.notice("later")
        later.dueAt = Date().addingTimeInterval(0.3)
        try await store.apply(updates: [], deletions: [], notices: [later, Self.notice("down", path: "/down")])
        let sender = Self.sender(store, receiver)
        await sender.start()
        try await Task.sleep(nanoseconds: 150_000_000)
        #expect(!receiver.all.contains { $0.id == "later" })
        #expect(await Self.eventually { receiver.all.contains { $0.id == "later" } })
        // The failing notice stays stored, with its tries counted and its next due time ahead.
        #expect(await Self.eventually {
            await store.pendingNotices(limit: 10).contains { $0.id == "down" && $0.attempts >= 2 && $0.dueAt > $0.createdAt }
        })
        await sender.stop(closingTransport: {})
        #expect(await store.pendingNotices(limit: 10).map(\.id) == ["down"])
    }
}
