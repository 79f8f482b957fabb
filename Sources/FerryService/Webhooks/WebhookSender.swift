import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Delivers the outbox's notices, at least once (API.md, "Webhooks").
///
/// Notices just committed are handed over in memory (`committed(_:)`) and sent at once; the store is read at
/// start, when a retry falls due, and when more are waiting than memory holds. Several are sent at once, each
/// signed afresh with the time of its try. After each try the store is told the verdict of `WebhookSchedule` (the
/// verdicts of tries that end together in one call): a delivered notice is kept as `delivered`, a gone or failed one
/// as `failed` (so they can be listed and sent again), any other gets its next due time, so the schedule carries on
/// across restarts. A crash between a receiver's 2xx and the settlement sends the notice once more, with the same
/// `webhook-id`.
///
/// Owner: this actor (the notices in flight and waiting, the doorbell).
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
    /// Whether this node may send notices now (several nodes: its `LeaseFence` holds); asked before every try.
    private let mayAct: @Sendable () -> Bool

    private var inFlight: Set<String> = []
    /// Committed notices not yet sent, in commit order (`freshIDs`: those still to send; one sent from a store
    /// read meanwhile is removed there and skipped here).
    private var fresh: [WebhookNotice] = []
    private var freshIDs: Set<String> = []
    /// Most committed notices held in memory; beyond it they wait in the store for a read.
    private let freshLimit = 4096
    /// Ids settled lately (at most `freshLimit`, oldest first): a commit's hand-over that arrives after its notice
    /// was already sent from a store read and settled must not send it again.
    private var recentlySettled: [String] = []
    private var recentlySettledIDs: Set<String> = []
    /// Whether the store must be read (start, overflow, a store error, slots that were full), and the earliest
    /// due time known of a stored notice not in flight.
    private var needsRead = true
    private var nextDue: Date?
    /// While the loop reads the outbox: the notices whose try ended meanwhile. The read may predate their
    /// deletion or new due time, so that copy is stale and must not be sent again.
    private var settledWhileReading: Set<String>?
    /// Verdicts of ended tries not yet stored, and whether the writer storing them runs.
    private var unsettled: [Settlement] = []
    private var settling = false
    private var doorbell: CheckedContinuation<Void, Never>?
    private var rung = false
    private var stopped = false
    private var loop: Task<Void, Never>?

    init(store: any WebhookNoticeStore, send: @escaping Send, key: [UInt8], schedule: WebhookSchedule, metrics: ServiceMetrics,
         logger: Logger, concurrency: Int = 16, now: @escaping @Sendable () -> Date = { Date() },
         mayAct: @escaping @Sendable () -> Bool = { true }) {
        self.mayAct = mayAct
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

    /// These notices were just committed (durable): send them.
    nonisolated func committed(_ notices: [WebhookNotice]) {
        Task { await self.accept(notices) }
    }

    /// Notices were stored without being handed over: read the outbox now.
    nonisolated func wake() {
        Task { await self.readSoon() }
    }

    private func accept(_ notices: [WebhookNotice]) {
        for notice in notices where !inFlight.contains(notice.id) && !recentlySettledIDs.contains(notice.id) {
            guard fresh.count < freshLimit else { needsRead = true; break }
            if freshIDs.insert(notice.id).inserted { fresh.append(notice) }
        }
        ring()
    }

    private func readSoon() {
        needsRead = true
        ring()
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
            // A node that lost its lease sends nothing until it holds it again; the notices wait in the store.
            guard mayAct() else {
                try? await Task.sleep(for: .milliseconds(250))
                continue
            }
            var next: Date?
            do {
                if needsRead || (nextDue.map { $0 <= now() } ?? false) {
                    needsRead = false
                    nextDue = try await sendDue()
                }
                sendFresh()
                next = nextDue
            } catch {
                logger.error("webhook outbox: reading the store failed", metadata: ["error": "\(error)"])
                needsRead = true
                next = now().addingTimeInterval(1)
            }
            await sleep(until: next)
        }
    }

    /// Starts a try of each committed notice handed over, while slots are free.
    private func sendFresh() {
        while inFlight.count < concurrency, !fresh.isEmpty {
            let notice = fresh.removeFirst()
            guard freshIDs.remove(notice.id) != nil, !inFlight.contains(notice.id) else { continue }
            inFlight.insert(notice.id)
            Task { await self.attempt(notice) }
        }
        if fresh.isEmpty { fresh.removeAll(keepingCapacity: false) }
    }

    /// Reads the outbox and starts a try of every due notice not already in flight (up to `concurrency`); returns
    /// when the next one not in flight is due (nil: none waiting, or slots full: the store is read again then).
    private func sendDue() async throws -> Date? {
        settledWhileReading = []
        defer { settledWhileReading = nil }
        let limit = concurrency + inFlight.count
        let pending = try await store.pendingNotices(limit: limit)
        let stale = settledWhileReading ?? []
        // A try that ended during the read may have been rescheduled, and a full page may have more behind it:
        // read again (a finished try rings the doorbell).
        if !stale.isEmpty || pending.count == limit { needsRead = true }
        let current = now()
        for notice in pending where !inFlight.contains(notice.id) && !stale.contains(notice.id) {
            guard notice.dueAt <= current else { return notice.dueAt }
            guard inFlight.count < concurrency else {
                needsRead = true  // a finished try rings the doorbell
                return nil
            }
            inFlight.insert(notice.id)
            freshIDs.remove(notice.id)
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
        guard mayAct() else {
            // Held back, not tried: sent when the node holds its lease again (or by another node from the store).
            inFlight.remove(notice.id)
            if freshIDs.insert(notice.id).inserted { fresh.insert(notice, at: 0) }
            metrics.fencedWrites(1)
            return
        }
        let attempt = notice.attempts + 1
        let answer: WebhookSchedule.Answer
        var detail = ""
        var status: Int?
        if let url = try? SubmittedURL.parse(notice.url) {
            let timestamp = Int64(now().timeIntervalSince1970)
            let headers = WebhookSignature.headers(id: notice.id, timestamp: timestamp, body: notice.body, key: key)
            switch await send(OutgoingRequest(url: url, headers: headers, body: notice.body)) {
            case .answered(let code): answer = .status(code); detail = "answered \(code)"; status = code
            case .failed(let message): answer = .none; detail = message
            case .refused(let reason): answer = .refused; detail = reason
            }
        } else {
            answer = .refused
            detail = "the receiver's URL cannot be parsed"
        }
        let verdict = schedule.verdict(answer, attempt: attempt, createdAt: notice.createdAt, now: now())
        settle(Settlement(notice: notice, attempt: attempt, verdict: verdict, detail: detail, status: status))
    }

    // MARK: Settling tries

    /// A try's verdict, waiting to be stored.
    private struct Settlement {
        var notice: WebhookNotice
        var attempt: Int
        var verdict: WebhookSchedule.Verdict
        var detail: String
        /// The HTTP status the try got; nil for none.
        var status: Int?
    }

    /// Queues a verdict; one writer stores everything queued in one call (one transaction), so under load many
    /// tries cost one sync. A notice stays in flight until its verdict is stored: the loop must not read its
    /// old row and send it again.
    private func settle(_ settlement: Settlement) {
        unsettled.append(settlement)
        guard !settling else { return }
        settling = true
        Task { await self.storeSettlements() }
    }

    private func storeSettlements() async {
        while !unsettled.isEmpty {
            let batch = unsettled
            unsettled.removeAll()
            var finishing: [NoticeSettlement] = [], rescheduling: [WebhookNoticeRetry] = []
            let settledAt = now()
            for item in batch {
                switch item.verdict {
                case .retry(let at):
                    rescheduling.append(WebhookNoticeRetry(id: item.notice.id, dueAt: at, attempts: item.attempt,
                                                           lastStatus: item.status))
                case .delivered, .gone, .failed:
                    finishing.append(NoticeSettlement(id: item.notice.id, state: item.verdict == .delivered ? .delivered : .failed,
                                                      attempts: item.attempt, lastStatus: item.status, at: settledAt))
                }
            }
            do {
                try await store.settleNotices(finishing: finishing, rescheduling: rescheduling)
                for item in batch { report(item) }
                for retry in rescheduling where nextDue.map({ retry.dueAt < $0 }) ?? true { nextDue = retry.dueAt }
            } catch {
                // The notices stay as they were stored: they are tried again (at least once, never lost).
                logger.error("webhook outbox: saving \(batch.count) tries failed", metadata: ["error": "\(error)"])
                try? await Task.sleep(nanoseconds: 1_000_000_000)  // not at once again: the store needs a moment
                needsRead = true
            }
            for item in batch {
                inFlight.remove(item.notice.id)
                settledWhileReading?.insert(item.notice.id)
                remember(settled: item.notice.id)
            }
            ring()
        }
        settling = false
    }

    private func remember(settled id: String) {
        recentlySettled.append(id)
        recentlySettledIDs.insert(id)
        if recentlySettled.count > freshLimit {
            recentlySettledIDs.remove(recentlySettled.removeFirst())
        }
    }

    /// Counts and logs a stored verdict.
    private func report(_ item: Settlement) {
        let notice = item.notice
        let metadata: Logger.Metadata = [
            "notice": "\(notice.id)", "type": "\(notice.type)", "job": "\(notice.jobID)",
            "receiver": "\(SubmittedURL.redacting(notice.url))", "attempt": "\(item.attempt)", "result": "\(item.detail)",
        ]
        switch item.verdict {
        case .delivered:
            metrics.webhookNotice(.delivered)
            logger.info("webhook notice delivered", metadata: metadata)
        case .gone:
            metrics.webhookNotice(.gone)
            logger.notice("webhook receiver answered 410: notice dropped", metadata: metadata)
        case .failed:
            metrics.webhookNotice(.failed)
            logger.warning("webhook notice given up", metadata: metadata)
        case .retry(let at):
            metrics.webhookNotice(.retried)
            logger.info("webhook notice to be tried again at \(Timestamp.rfc3339(at))", metadata: metadata)
        }
    }
}
