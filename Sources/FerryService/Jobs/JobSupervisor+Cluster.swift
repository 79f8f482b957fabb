import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// One node of several (`role` set): which jobs this node runs, and keeping the table current with the others'.
///
/// Rules: the engine runs only jobs this node owns (`owned`): those `claim` gave it (`run(claimed:)`) or an action
/// `acquire`d. A job that leaves the running states is no longer owned (the store releases it with that commit). A
/// job `renew` no longer returns, or whose commit was refused, was taken over: its transfer is stopped, its files
/// and state left as they are, and its row read again. Jobs owned elsewhere are read again from the store when a
/// notification names them (`refresh`), and actions on them are forwarded to their owner.
extension JobSupervisor {
    // MARK: Ownership

    /// How many jobs this node runs now.
    var ownedCount: Int { owned.count }

    /// A mark to pass to `keepOnly(_:ownedBefore:)`, taken before `renew`.
    var ownershipMark: Int { ownershipEpoch }

    /// Starts running jobs `claim` gave this node: each continues from the bytes this node has of it, or from the parts
    /// the node before stored when they reach further (the engine restores them, `DownloadEngine+Parts`).
    func run(claimed: [ClaimedJob]) {
        for claim in claimed {
            var job = claim.job
            // Changed here since the claim read the row: ended while the store was away (the claim lets that
            // commit land; it releases the job), or acquired by an action (`actsHere`) before the claim got here:
            // running again (a resume), or paused (its commit releases the job; the claim's row would undo it).
            if owned.contains(job.id) { continue }
            if let known = jobs[job.id], known.updatedAt > job.updatedAt {
                if known.state.isTerminal { commits.enqueue(CommitPipeline.Change(upserts: [known])) }
                guard known.state.needsRunning else { continue }
                job = known  // as changed here (a PATCH)
            }
            if claim.previousOwner != nil { metrics.handover() }
            role?.held.took(job.id, epoch: claim.epoch)
            if claim.objectUploadRead { role?.claimedUploads.claimed(job.id, document: claim.objectUpload) }
            runHere(job)
        }
        metrics.claimed(claimed.count)
    }

    /// Runs a job this node holds: its delivery again when it was delivering (`continueDelivery`), else its transfer
    /// from the bytes on disk (or the parts stored).
    private func runHere(_ record: JobRecord) {
        take(record.id)
        restarts[record.id] = nil
        rates[record.id] = nil
        if record.state == .delivering, record.filename != nil {
            insertIntoTable(record)
            let since = ownedSince[record.id]
            Task { await self.continueDelivery(record.id, ownedSince: since) }
            return
        }
        downloadHere(record)
    }

    /// A job taken while it was delivering: delivered from this node's file under its name when that file is the
    /// job's (`holdsDownloadedFile`: another job's file may have the name here), else downloaded again first. Left
    /// alone when the job changed meanwhile or this node took it again since (`ownedSince`: that run continues it).
    private func continueDelivery(_ id: String, ownedSince since: Int?) async {
        guard let job = jobs[id] else { return }
        let own = await holdsDownloadedFile(job)
        guard owned.contains(id), ownedSince[id] == since, let job = jobs[id], job.state == .delivering else { return }
        if own { startDelivery(job) } else { downloadHere(job) }
    }

    /// Whether this node's finished file under the job's name is the file the job downloaded. On one node a name
    /// is one job's; on several, names are unique only per node, so the file's size and SHA-256 must be the job's.
    func holdsDownloadedFile(_ job: JobRecord) async -> Bool {
        guard let filename = job.filename, files.hasFinishedFile(named: filename) else { return false }
        guard role != nil else { return true }
        guard let sha256 = job.sha256 else { return false }
        let files = self.files, size = job.bytesExpected ?? job.bytesReceived
        return await withCheckedContinuation { continuation in
            files.holdsFinishedFile(named: filename, size: size, sha256: sha256) { continuation.resume(returning: $0) }
        }
    }

    /// Runs a held job's transfer from the bytes this node has of it (or the parts stored).
    private func downloadHere(_ record: JobRecord) {
        var job = record
        let onDisk = files.bytesOnDisk(jobID: job.id)
        let changed = job.state != .waiting || job.bytesReceived != onDisk
        job.state = .waiting
        job.bytesReceived = onDisk
        if var sources = job.sources, onDisk == 0 {
            for index in sources.indices { sources[index].bytesReceived = 0 }
            job.sources = sources
        }
        if changed { job.updatedAt = now() }
        insertIntoTable(job)
        if changed { commits.enqueue(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)])) }
        submitTransfer(job)
    }

    // MARK: Fencing

    /// Fences the node now (see `enforceFence`); also when an engine event of a job it runs finds the fence due
    /// before the watcher did (a process continued after a stop: nothing of that event is committed).
    func fenceNow(_ fence: LeaseFence) {
        fenced = true
        let held = owned
        guard !held.isEmpty else { return }
        logger.error("this node's leases were not renewed in time: its jobs stop here, keeping their bytes, until it holds them again",
                     metadata: ["jobs": "\(held.count)", "after": "\(fence.fenceAfter)"])
        for id in held {
            owned.remove(id)
            ownedSince[id] = nil
            rates[id] = nil
            if jobs[id]?.state == .delivering { engine.stopDelivery(id: id, stopped: nil) }
            engine.pause(id: id, stopped: nil)
        }
        suspended.formUnion(held)
    }

    /// Fences or lifts the fence as the node's `LeaseFence` says: called often by the `LeaseKeeper` (`renewed`
    /// nil), and after each renewal that succeeded with the jobs it renewed, which alone may lift the fence.
    ///
    /// Fenced, the node stops the transfers and deliveries of every job it holds, their bytes and stored state kept,
    /// and forgets it runs them (their engine events no longer count, nothing of theirs is committed). Lifted, it
    /// runs again those the renewal shows it still holds, and reads the others back: another node took them over.
    func enforceFence(renewed: Set<String>? = nil) async {
        guard let fence = role?.fence else { return }
        switch fence.decision(fenced: fenced) {
        case .keep:
            return
        case .fence:
            fenceNow(fence)
        case .lift:
            guard let renewed else { return }
            fenced = false
            let held = suspended
            suspended = []
            guard !held.isEmpty else { return }
            let kept = held.filter { renewed.contains($0) }
            logger.notice("this node holds its leases again: its jobs continue", metadata: [
                "resumed": "\(kept.count)", "takenOver": "\(held.count - kept.count)",
            ])
            var idle: [String] = []
            for id in kept.sorted() {
                if let job = jobs[id], job.state.needsRunning { runHere(job) } else { idle.append(id) }
            }
            if let role, !idle.isEmpty { _ = try? await role.store.release(ids: idle, node: role.node) }
            let lost = held.subtracting(kept)
            for id in lost { table.setNode(nil, of: id) }
            await refresh(Array(lost))
            role?.wantsWork()
        }
    }

    /// Stops the jobs this node owned when `mark` was taken (`ownershipMark`, before `renew`) that `renewed` leaves
    /// out: another node took them over. Jobs taken since are kept: the renewal may have missed them.
    func keepOnly(_ renewed: Set<String>, ownedBefore mark: Int) async {
        let lost = owned.filter { !renewed.contains($0) && (ownedSince[$0] ?? .max) <= mark }
        guard !lost.isEmpty else { return }
        logger.warning("jobs taken over by another node: stopping them here", metadata: ["jobs": "\(lost.sorted())"])
        await giveUp(Array(lost))
    }

    /// The store refused changes of these jobs: another node owns them now.
    func refused(_ owners: [String: String]) async {
        metrics.fencedWrites(owners.count)
        let mine = owners.keys.filter { owned.contains($0) }
        if !mine.isEmpty {
            logger.warning("changes refused: another node owns these jobs now", metadata: ["jobs": "\(mine.sorted())"])
        }
        await giveUp(mine)
        // Jobs it no longer ran (a late write of an ended job): the store's version wins.
        await refresh(owners.keys.filter { !owned.contains($0) && !suspended.contains($0) })
    }

    /// Stops the transfers of jobs no longer this node's, without touching their files or stored state, and reads
    /// their rows again.
    private func giveUp(_ ids: [String]) async {
        for id in ids {
            drop(id)
            rates[id] = nil
            if jobs[id]?.state == .delivering { engine.stopDelivery(id: id, stopped: nil) }
            engine.pause(id: id, stopped: nil)
        }
        await refresh(ids)
    }

    /// Reads the jobs another node's commit named (those this node runs excepted: its view wins), with which node
    /// runs each, in one statement.
    /// - Returns: whether what was read may have left work to claim (`ClaimWorth`).
    @discardableResult
    func refresh(_ ids: [String]) async -> Bool {
        guard let role else { return false }
        let wanted = ids.filter { !owned.contains($0) && !suspended.contains($0) }
        guard !wanted.isEmpty else { return false }
        let rows: [(job: JobRecord, liveOwner: String?)]
        do {
            rows = try await role.store.jobsWithLiveOwners(ids: wanted)
        } catch {
            logger.warning("cannot read jobs another node changed", metadata: ["jobs": "\(wanted.count)", "error": "\(error)"])
            return false
        }
        let found = Set(rows.map(\.job.id))
        let gone = wanted.filter { !found.contains($0) }
        let goneKeys = gone.map { jobs[$0]?.ownerKey }
        absorb(rows.map(\.job), gone: gone)
        for (job, owner) in rows where !owned.contains(job.id) {
            table.setNode(owner == role.node ? nil : owner, of: job.id)
        }
        return ClaimWorth.after(rows, goneKeys: goneKeys)
    }

    /// Reads every job again (at start and after the listener reconnected: notifications may have been missed).
    func refreshAll() async {
        guard let role else { return }
        do {
            let stored = try await role.store.all()
            let kept = Set(stored.map(\.id))
            absorb(stored, gone: jobs.values.map(\.id).filter { !kept.contains($0) })
            await refreshOwners()
        } catch {
            logger.warning("cannot read the jobs again", metadata: ["error": "\(error)"])
        }
    }

    /// Reads which node runs what, for every job (`"node"`): after `refreshAll`, and every lease renewal, so a lease
    /// that ran out shows without a notification.
    func refreshOwners() async {
        guard let role, let owners = try? await role.store.liveOwners() else { return }
        table.setNodes(owners.filter { $0.value != role.node }, keeping: owned)
    }

    /// Puts rows read from the store into the table (those this node owns excepted: its view wins), removes the
    /// jobs no longer stored, and wakes forwarded actions that now show.
    private func absorb(_ records: [JobRecord], gone: [String]) {
        guard let role else { return }
        // Read back: another node changed these, so no write of this node's carries an epoch of them any more.
        role.held.forget(records.map(\.id) + gone)
        for stored in records where !owned.contains(stored.id) && !suspended.contains(stored.id) {
            if let current = jobs[stored.id], current.dedupeKey != stored.dedupeKey { reindex(current, dedupeKey: stored.dedupeKey) }
            insertIntoTable(stored)
            // Rates of a job running elsewhere come with its progress (`absorbProgress`), until it stops.
            if !stored.state.needsRunning { rates[stored.id] = nil }
            wakeWaiters(stored.id)
        }
        for id in gone where !owned.contains(id) && !suspended.contains(id) {
            removeFromTable(id)
            wakeWaiters(id)
        }
    }

    /// Commits a `job` event of the running job this node owns that changed least recently (its bytes so far
    /// stored too): a new stored event, so a new block of progress ids (`ClusterEventID`).
    func checkpoint() {
        let running = owned.compactMap { jobs[$0] }.filter { $0.state == .downloading || $0.state == .delivering }
        guard var job = running.min(by: { $0.updatedAt < $1.updatedAt }) else { return }
        job.updatedAt = now()
        jobs[job.id] = job
        commits.enqueue(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)]))
    }

    /// Marks a job as this node's.
    func take(_ id: String) {
        table.setNode(role?.node, of: id)
        owned.insert(id)
        ownershipEpoch += 1
        ownedSince[id] = ownershipEpoch
    }

    /// Forgets that this node owns a job (it stopped running, was deleted or was lost).
    func drop(_ id: String) {
        guard owned.remove(id) != nil else { return }
        ownedSince[id] = nil
        role?.claimedUploads.forget(id)
        table.setNode(nil, of: id)
        role?.wantsWork()
    }

    /// After a local change: a job that no longer needs running is no longer owned (its commit releases it).
    func settleOwnership(_ job: JobRecord) {
        if role != nil, !job.state.needsRunning { drop(job.id) }
    }

    // MARK: Actions on any node

    /// Where an action on `id` is made: here (`true`: the job is this node's, or was unowned and is now), or on
    /// its owner, to whom `action` is forwarded (`false`: the change is visible here when this returns).
    func actsHere(_ action: ForwardedAction, on id: String) async throws -> Bool {
        guard let role, !owned.contains(id) else { return true }
        let acquisition: JobAcquisition
        do { acquisition = try await role.store.acquire(id: id, node: role.node, lease: role.lease) } catch {
            throw JobsError.store(error)
        }
        switch acquisition {
        case .notFound:
            removeFromTable(id)
            throw JobsError.notFound(id: id)
        case .acquired(let record, let epoch):
            role.held.took(id, epoch: epoch)
            take(id)
            insertIntoTable(record)
            return true
        case .owned(let owner, _):
            try await forward(action, on: id, to: owner, role: role)
            return false
        }
    }

    /// Sends `action` to `owner` and waits until a notification shows the job changed. A command longer than a
    /// notification carries (a PATCH with a URL of several kilobytes) is refused here (`tooLargeToForward`).
    private func forward(_ action: ForwardedAction, on id: String, to owner: String, role: NodeRole) async throws {
        let command = action.command(id, asker: role.node)
        guard ClusterChannel.fits(command, to: owner) else {
            throw JobsError.tooLargeToForward(node: owner, bytes: command.utf8.count)
        }
        let timeout = role.forwardTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            let changed = Task { await self.waitForChange(id, showing: action) }
            group.addTask { if let refusal = await changed.value { throw refusal } }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw JobsError.ownerSilent(node: owner)
            }
            do {
                try await role.store.send(command: command, to: owner)
                try await group.next()
            } catch {
                group.cancelAll()
                self.stopWaiting(id)
                throw error is JobsError ? error : JobsError.store(error)
            }
            group.cancelAll()
        }
    }

    /// An action forwarded to a job's owner, waiting to show (resumed with nil) or be refused (with the refusal).
    typealias ChangeWaiter = (ForwardedAction, CheckedContinuation<JobsError?, Never>)

    /// Waits until the job shows `action` done (nil), or its owner refused it (the refusal).
    private func waitForChange(_ id: String, showing action: ForwardedAction) async -> JobsError? {
        if action.isVisible(in: jobs[id]) { return nil }
        return await withCheckedContinuation { continuation in changeWaiters[id, default: []].append((action, continuation)) }
    }

    private func stopWaiting(_ id: String) {
        for (_, waiter) in changeWaiters.removeValue(forKey: id) ?? [] { waiter.resume(returning: nil) }
    }

    /// The owner refused a forwarded action: the actions of that verb waiting on the job get its refusal.
    private func refusedByOwner(_ refusal: ForwardedRefusal) {
        guard let waiting = changeWaiters.removeValue(forKey: refusal.id) else { return }
        var still: [ChangeWaiter] = []
        for (action, waiter) in waiting {
            if action.verb == refusal.verb { waiter.resume(returning: refusal.error) } else { still.append((action, waiter)) }
        }
        if !still.isEmpty { changeWaiters[refusal.id] = still }
    }

    /// Wakes the forwarded actions on `id` that its row now shows done.
    private func wakeWaiters(_ id: String) {
        guard let waiting = changeWaiters.removeValue(forKey: id) else { return }
        let job = jobs[id]
        var still: [ChangeWaiter] = []
        for (action, waiter) in waiting {
            if action.isVisible(in: job) { waiter.resume(returning: nil) } else { still.append((action, waiter)) }
        }
        if !still.isEmpty { changeWaiters[id] = still }
    }

    /// Carries out an action another node forwarded here (the job is this node's, or no longer anybody's), and tells
    /// the asking node when it cannot; or hands an owner's refusal to the action waiting for it here.
    func perform(_ command: String) async {
        if let refusal = ForwardedRefusal.parse(command) {
            refusedByOwner(refusal)
            return
        }
        guard let (action, id, asker) = ForwardedAction.parse(command) else {
            logger.warning("unknown command from another node", metadata: ["command": "\(command)"])
            return
        }
        do {
            switch action {
            case .pause: _ = try await pause(id)
            case .resume: _ = try await resume(id)
            case .cancel: _ = try await cancel(id)
            case .delete: try await delete(id)
            case .patch(let patch): _ = try await update(id, patch)
            }
        } catch {
            logger.notice("a forwarded action was refused", metadata: ["command": "\(command)", "error": "\(error)"])
            let refusal = ForwardedRefusal(id: id, verb: action.verb, error: error as? JobsError ?? .storeFailed("\(error)"))
            do { try await role?.store.send(command: refusal.command, to: asker) } catch {
                logger.warning("cannot tell the asking node of a refused action", metadata: ["node": "\(asker)", "error": "\(error)"])
            }
        }
    }
}
