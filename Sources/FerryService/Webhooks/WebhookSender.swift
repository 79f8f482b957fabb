import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Delivers the outbox's notices, at least once (API.md, "Webhooks").
///
/// One loop reads the soonest-due notices from the store, sends those due (several at once, each signed afresh
/// with the time of its try), and sleeps until the next is due or `wake()` says new ones were committed. After
/// each try the store is told the verdict of `WebhookSchedule`: a delivered, gone or failed notice is deleted, any
/// other gets its next due time, so the schedule carries on across restarts. A crash between a receiver's 2xx and
/// the deletion sends the notice once more, with the same `webhook-id`.
///
/// Owner: this actor (the notices in flight, the doorbell).
actor WebhookSender {
    typealias Send = @Sendable (OutgoingRequest) async -> RequestOutcome

    private let store: any WebhookNoticeStore
    private let send: Send
    private let key: [UInt8]
    private let schedule: WebhookSchedule
    private let metrics: ServiceMetrics
    private let logger: Logger
    private let now: @Sendable () -> Date
    /// Most notices sent at once.
    private let concurrency: Int

    private var inFlight: Set<String> = []
    /// While the loop reads the outbox: the notices whose try ended meanwhile. The read may predate their
    /// deletion or new due time, so that copy is stale and must not be sent again.
    private var settledWhileReading: Set<String>?
    private var doorbell: CheckedContinuation<Void, Never>?
    private var rung = false
    private var stopped = false
    private var loop: Task<Void, Never>?

    init(store: any WebhookNoticeStore, send: @escaping Send, key: [UInt8], schedule: WebhookSchedule, metrics: ServiceMetrics,
         logger: Logger, concurrency: Int = 16, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.send = send
        self.key = key
        self.schedule = schedule
        self.metrics = metrics
        self.logger = logger
        self.concurrency = concurrency
        self.now = now
    }

    /// Starts the loop (once).
    func start() {
        guard loop == nil, !stopped else { return }
        loop = Task { await self.run() }
    }

    /// New notices were committed: look at the outbox now.
    nonisolated func wake() {
        Task { await self.ring() }
    }

    /// Stops the loop, then closes the transport (which ends the tries in flight) and waits, at most `grace`
    /// seconds, until each of them has stored its outcome.
    func stop(closingTransport closeTransport: @Sendable () async -> Void, grace: Double = 3) async {
        stopped = true
        ring()
        await loop?.value
        await closeTransport()
        let deadline = Date().addingTimeInterval(grace)
        while !inFlight.isEmpty, Date() < deadline {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    // MARK: The loop

    private func run() async {
        while !stopped {
            let next: Date?
            do {
                next = try await sendDue()
            } catch {
                logger.error("webhook outbox: reading the store failed", metadata: ["error": "\(error)"])
                next = now().addingTimeInterval(1)
            }
            await sleep(until: next)
        }
    }

    /// Starts a try of every due notice not already in flight (up to `concurrency`); returns when the next one
    /// not in flight is due (nil: none waiting).
    private func sendDue() async throws -> Date? {
        settledWhileReading = []
        defer { settledWhileReading = nil }
        let pending = try await store.pendingNotices(limit: concurrency + inFlight.count)
        let stale = settledWhileReading ?? []
        let current = now()
        for notice in pending where !inFlight.contains(notice.id) && !stale.contains(notice.id) {
            guard notice.dueAt <= current else { return notice.dueAt }
            guard inFlight.count < concurrency else { return nil }  // a finished try rings the doorbell
            inFlight.insert(notice.id)
            Task { await self.attempt(notice) }
        }
        return nil
    }

    private func sleep(until due: Date?) async {
        if rung || stopped { rung = false; return }
        var timer: Task<Void, Never>?
        if let due {
            let seconds = max(0, due.timeIntervalSince(now()))
            timer = Task { [weak self] in
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
                guard !Task.isCancelled else { return }
                await self?.ring()
            }
        }
        await withCheckedContinuation { doorbell = $0 }
        timer?.cancel()
        rung = false
    }

    private func ring() {
        rung = true
        let waiting = doorbell
        doorbell = nil
        waiting?.resume()
    }

    // MARK: One try

    private func attempt(_ notice: WebhookNotice) async {
        defer {
            inFlight.remove(notice.id)
            settledWhileReading?.insert(notice.id)
            ring()
        }
        let attempt = notice.attempts + 1
        let answer: WebhookSchedule.Answer
        var detail = ""
        if let url = try? SubmittedURL.parse(notice.url) {
            let timestamp = Int64(now().timeIntervalSince1970)
            let headers = WebhookSignature.headers(id: notice.id, timestamp: timestamp, body: notice.body, key: key)
            switch await send(OutgoingRequest(url: url, headers: headers, body: notice.body)) {
            case .answered(let status): answer = .status(status); detail = "answered \(status)"
            case .failed(let message): answer = .none; detail = message
            case .refused(let reason): answer = .refused; detail = reason
            }
        } else {
            answer = .refused
            detail = "the receiver's URL cannot be parsed"
        }
        let verdict = schedule.verdict(answer, attempt: attempt, createdAt: notice.createdAt, now: now())
        let metadata: Logger.Metadata = [
            "notice": "\(notice.id)", "type": "\(notice.type)", "job": "\(notice.jobID)",
            "receiver": "\(SubmittedURL.redacting(notice.url))", "attempt": "\(attempt)", "result": "\(detail)",
        ]
        do {
            switch verdict {
            case .delivered:
                _ = try await store.deleteNotice(id: notice.id)
                metrics.webhookNotice(.delivered)
                logger.info("webhook notice delivered", metadata: metadata)
            case .gone:
                _ = try await store.deleteNotice(id: notice.id)
                metrics.webhookNotice(.gone)
                logger.notice("webhook receiver answered 410: notice dropped", metadata: metadata)
            case .failed:
                _ = try await store.deleteNotice(id: notice.id)
                metrics.webhookNotice(.failed)
                logger.warning("webhook notice given up", metadata: metadata)
            case .retry(let at):
                try await store.rescheduleNotice(id: notice.id, dueAt: at, attempts: attempt)
                metrics.webhookNotice(.retried)
                logger.info("webhook notice to be tried again at \(Timestamp.rfc3339(at))", metadata: metadata)
            }
        } catch {
            // The notice stays as it was stored: it is tried again (at least once, never lost).
            logger.error("webhook outbox: saving a try failed", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            try? await Task.sleep(nanoseconds: 1_000_000_000)  // not at once again: the store needs a moment
        }
    }
}
