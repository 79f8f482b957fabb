import FerryStore
import Foundation
import Logging

/// Makes job changes durable, then announces their events, strictly in the order they were made.
///
/// The supervisor changes its in-memory jobs synchronously and hands each change here with the
/// events it caused (ids already allocated, so enqueue order is id order). One drain task writes
/// everything pending to the store — several changes of the same job collapse to the last one —
/// and only then publishes the events: a state change is durable before anyone hears of it.
/// Under a stream of changes, writes start at most every `writeSpacing` (one transaction each).
/// Callers that must answer only once the change is durable call `submit` (synchronously, where
/// the ids were allocated) and then await the ticket's `durable()`. The queueing must not be behind
/// an `await`: a nonisolated async method would run off the caller's actor, letting a later change
/// with higher ids queue first and publish out of order.
///
/// With several nodes (`cluster`), a batch is one fenced `ClusterJobStore.commit`: the `job`/`removed` events are
/// stored with it and get their ids there (the ids allocated here are placeholders), and the node's
/// `ClusterEventFeed` publishes them as it reads them back, with this node's progress events (which the
/// `ProgressRelay` also sends to the other nodes); changes the store refused (a job another node owns now) are
/// reported to `refused`.
///
/// A batch the store does not take (a database that went away, a full disk) fails its tickets and is written
/// again, merged with what came since, with back-off until the store answers (`failure` says why meanwhile, for
/// readiness and for refusing new API changes): nothing the engine reported is lost to an outage.
///
/// Owner: its own lock guards the pending list; the drain task is the only writer to the store.
final class CommitPipeline: @unchecked Sendable {
    /// How a node of several commits (see the type's documentation).
    struct Cluster: Sendable {
        var store: any ClusterJobStore
        var node: String
        var feed: ClusterEventFeed
        /// Carries this node's progress to the others, coalesced.
        var relay: ProgressRelay
        /// Told the jobs whose changes were refused, with their owners.
        var refused: @Sendable ([String: String]) -> Void
        /// The epochs the node took its jobs under: each change is stamped with those of its jobs when queued.
        var held: HeldEpochs? = nil
    }

    /// One batch of changes made together.
    struct Change: Sendable {
        var upserts: [JobRecord] = []
        var deletions: [String] = []
        var events: [ServerEvent] = []
        /// Webhook notices the change causes, written in the same transaction.
        var notices: [WebhookNotice] = []
        /// With several nodes: the epoch the node held each of its jobs under when the change was made (stamped
        /// by `enqueue`), the store's proof that it may still write them (`ClusterChange.heldUnder`).
        var heldUnder: [String: Int64] = [:]
        /// Run once the change is durable (after a failed write, once a later write took it), before its events are
        /// published: what must follow the store, not the change (the table showing a job's end, say).
        var onDurable: [@Sendable () -> Void] = []
    }

    private let store: any JobStore
    private let cluster: Cluster?
    private let publish: @Sendable ([ServerEvent]) -> Void
    private let beforePublish: @Sendable ([ServerEvent]) async throws -> Void
    private let makeRoom: @Sendable () -> Bool
    private let noticesStored: @Sendable ([WebhookNotice]) -> Void
    private let logger: Logger
    private let lock = NSLock()
    private var pending: [(Change, Ticket?)] = []
    private var draining = false
    private var idle: [CheckedContinuation<Void, Never>] = []
    /// Set when a write failed: readiness reports it.
    private(set) var lastFailure: String?

    /// - Parameters:
    ///   - beforePublish: runs after each batch is durable and before its events go out (the event
    ///     id high-water mark is kept ahead of the ids published).
    ///   - makeRoom: called when a write failed because the disk is full; true when it freed space
    ///     (`StoreBallast.release`), and the write is then tried once more.
    ///   - noticesStored: called with a batch's webhook notices once they are durable (the sender sends them).
    init(store: any JobStore, cluster: Cluster? = nil, logger: Logger,
         makeRoom: @escaping @Sendable () -> Bool = { false },
         noticesStored: @escaping @Sendable ([WebhookNotice]) -> Void = { _ in },
         beforePublish: @escaping @Sendable ([ServerEvent]) async throws -> Void = { _ in },
         publish: @escaping @Sendable ([ServerEvent]) -> Void) {
        self.store = store
        self.cluster = cluster
        self.logger = logger
        self.makeRoom = makeRoom
        self.noticesStored = noticesStored
        self.beforePublish = beforePublish
        self.publish = publish
    }

    /// Queues a change; returns at once.
    func enqueue(_ change: Change) {
        enqueue(change, waiter: nil)
    }

    /// Queues a change now and returns a ticket whose `durable()` returns once the change is
    /// written (its events are then published too) or throws the store's error.
    func submit(_ change: Change) -> Ticket {
        let ticket = Ticket()
        enqueue(change, waiter: ticket)
        return ticket
    }

    /// The outcome of one submitted change, awaited by the API call that made it.
    /// Owner: its lock guards the outcome and the one waiting continuation.
    final class Ticket: @unchecked Sendable {
        private let lock = NSLock()
        private var outcome: Result<Void, any Error>?
        private var waiter: CheckedContinuation<Void, any Error>?

        func durable() async throws {
            try await withCheckedThrowingContinuation { continuation in
                lock.lock()
                if let outcome {
                    lock.unlock()
                    continuation.resume(with: outcome)
                } else {
                    waiter = continuation
                    lock.unlock()
                }
            }
        }

        fileprivate func resume(with result: Result<Void, any Error>) {
            lock.lock()
            outcome = result
            let waiting = waiter
            waiter = nil
            lock.unlock()
            waiting?.resume(with: result)
        }
    }

    /// Returns when everything queued so far has been written and published.
    func flush() async {
        await withCheckedContinuation { continuation in
            lock.lock()
            if pending.isEmpty && !draining {
                lock.unlock()
                continuation.resume()
            } else {
                idle.append(continuation)
                lock.unlock()
            }
        }
    }

    private func enqueue(_ change: Change, waiter: Ticket?) {
        var change = change
        if let held = cluster?.held, !(change.upserts.isEmpty && change.deletions.isEmpty) {
            change.heldUnder = held.epochs(of: change.upserts.map(\.id) + change.deletions)
        }
        lock.lock()
        pending.append((change, waiter))
        let start = !draining
        draining = true
        lock.unlock()
        if start {
            Task { await self.drain() }
        }
    }

    private func drain() async {
        var failures = 0
        var lastWrite: ContinuousClock.Instant?
        while true {
            // Changes that come in while a write runs wait for the next one; when it follows close on the last, they
            // wait a little longer (`writeSpacing`) for company. Nothing pending: the drain ends at once.
            if let lastWrite, lock.withLock({ !pending.isEmpty }) {
                let next = lastWrite.advanced(by: Self.writeSpacing)
                if next > .now { try? await Task.sleep(until: next, clock: .continuous) }
            }
            guard let batch = takeBatch() else { break }
            lastWrite = .now
            let outcome = await write(batch)
            guard case .failed(let noticesStored) = outcome else {
                failures = 0
                continue
            }
            // The store did not take the batch: its tickets have failed (their API calls answer 503), but the
            // changes stay made in memory, so they are written again, ahead of anything newer, until it answers.
            failures += 1
            var again = Self.merged(batch)
            if noticesStored { again.notices = [] }
            lock.withLock { pending.insert((again, nil), at: 0) }
            wakeFlushers()
            try? await Task.sleep(for: Self.retryDelay(afterFailures: failures))
        }
    }

    /// The least time from the start of one write to the start of the next. Under a stream of small changes (a
    /// batch of small files finishing: a few changes per job, each a few hundred microseconds apart) writes would
    /// otherwise follow each other with one or two changes each, a transaction and a sync apiece; spaced, each
    /// takes all that came in meanwhile. The first write after a pause is not delayed: a lone change (an API call
    /// waiting for its ticket) is written at once, and under load an event waits at most this long more.
    static let writeSpacing: Duration = .milliseconds(5)

    /// How long a failed write waits before it is tried again: 0.25 s, doubling, at most 5 s.
    static func retryDelay(afterFailures failures: Int) -> Duration {
        .milliseconds(min(5_000, 250 << min(max(failures - 1, 0), 5)))
    }

    /// A batch as one change: the last version of each job (a deletion cancels earlier versions), every webhook
    /// notice, and the `job`/`removed` events in order. `write` stores its records; a failed batch is written again
    /// as it, `progress` events being stale by then and left out, so it stays as small as the jobs it touches
    /// however long the store is away.
    static func merged(_ batch: [(Change, Ticket?)]) -> Change {
        var latest: [String: JobRecord] = [:]
        var order: [String] = []
        var merged = Change()
        for (change, _) in batch {
            for record in change.upserts {
                if latest.updateValue(record, forKey: record.id) == nil { order.append(record.id) }
            }
            for id in change.deletions {
                if latest.removeValue(forKey: id) != nil { order.removeAll { $0 == id } }
                merged.deletions.append(id)
            }
            merged.notices += change.notices
            merged.events += change.events.filter { $0.kind != .progress }
            merged.heldUnder.merge(change.heldUnder) { _, later in later }
            merged.onDurable += change.onDurable
        }
        merged.upserts = order.compactMap { latest[$0] }
        return merged
    }

    /// Wakes `flush` callers: what could be written has been tried (a failing store must not hold up a shutdown).
    private func wakeFlushers() {
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { idle.removeAll() }
            return idle
        }
        waiters.forEach { $0.resume() }
    }

    /// Everything pending, or nil (and the drain marked finished, idle waiters woken) when nothing is.
    private func takeBatch() -> [(Change, Ticket?)]? {
        let (batch, waiters) = lock.withLock { () -> ([(Change, Ticket?)], [CheckedContinuation<Void, Never>]) in
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            guard batch.isEmpty else { return (batch, []) }
            draining = false
            let waiters = idle
            idle.removeAll()
            return ([], waiters)
        }
        waiters.forEach { $0.resume() }
        return batch.isEmpty ? nil : batch
    }

    /// How writing a batch ended.
    private enum Outcome {
        case written
        /// Logged, tickets failed; `noticesStored`: its webhook notices were stored (and handed on) all the same.
        case failed(noticesStored: Bool)
    }

    /// Writes one batch and publishes its events.
    private func write(_ batch: [(Change, Ticket?)]) async -> Outcome {
        // Collapsed: the last version of each job wins, a deletion cancels earlier upserts; notices are never
        // collapsed (each is its own delivery).
        let collapsed = Self.merged(batch)
        let (updates, deleted, notices) = (collapsed.upserts, collapsed.deletions, collapsed.notices)
        if let cluster {
            return await write(batch, updates: updates, deletions: deleted, notices: notices, heldUnder: collapsed.heldUnder,
                               onDurable: collapsed.onDurable, cluster: cluster)
        }
        var noticesStored = false
        do {
            do {
                try await store.apply(updates: updates, deletions: deleted, notices: notices)
            } catch let error as JobStoreError where error.isOutOfSpace && makeRoom() {
                logger.warning("the disk is full: released the store's ballast and writing again", metadata: ["error": "\(error)"])
                try await store.apply(updates: updates, deletions: deleted, notices: notices)
            }
            noticesStored = true
            if !notices.isEmpty { self.noticesStored(notices) }
            try await beforePublish(batch.flatMap { $0.0.events })
            lock.withLock { lastFailure = nil }
        } catch {
            return failed(batch, error, noticesStored: noticesStored)
        }
        collapsed.onDurable.forEach { $0() }
        let events = batch.flatMap { $0.0.events }
        if !events.isEmpty { publish(events) }
        for (_, waiter) in batch { waiter?.resume(with: .success(())) }
        return .written
    }

    /// A batch as one fenced cluster commit; its events reach the hub through the feed.
    private func write(_ batch: [(Change, Ticket?)], updates: [JobRecord], deletions: [String], notices: [WebhookNotice],
                       heldUnder: [String: Int64], onDurable: [@Sendable () -> Void], cluster: Cluster) async -> Outcome {
        let events = batch.flatMap { $0.0.events }
        let stored = events.compactMap { event -> NewEvent? in
            guard let jobID = event.jobID else { return nil }
            switch event.kind {
            case .job: return NewEvent(jobID: jobID, kind: .job, data: event.data, ownerKey: event.owner)
            case .removed: return NewEvent(jobID: jobID, kind: .removed, data: event.data, ownerKey: event.owner)
            case .progress, .reset: return nil
            }
        }
        let change = ClusterChange(updates: updates, deletions: deletions, notices: notices, events: stored, heldUnder: heldUnder)
        let result: ClusterCommit
        do {
            result = try await cluster.store.commit(change, node: cluster.node)
            if !result.refused.isEmpty { cluster.refused(result.refused) }
            let kept = notices.filter { result.refused[$0.jobID] == nil }
            if !kept.isEmpty { noticesStored(kept) }
            lock.withLock { lastFailure = nil }
        } catch {
            return failed(batch, error, noticesStored: false)
        }
        onDurable.forEach { $0() }
        await cluster.feed.publishProgress(events)
        await cluster.relay.note(events)
        if !stored.isEmpty { await cluster.feed.committed(result.events) }
        for (_, waiter) in batch { waiter?.resume(with: .success(())) }
        return .written
    }

    /// A batch the store did not take: logged, kept as `failure`, its tickets failed with `error`.
    private func failed(_ batch: [(Change, Ticket?)], _ error: any Error, noticesStored: Bool) -> Outcome {
        logger.error("job store write failed; changes not announced", metadata: ["error": "\(error)"])
        lock.withLock { lastFailure = "\(error)" }
        for (_, waiter) in batch { waiter?.resume(with: .failure(error)) }
        return .failed(noticesStored: noticesStored)
    }

    var failure: String? {
        lock.lock(); defer { lock.unlock() }
        return lastFailure
    }
}
