import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// User actions: pause, resume, cancel, PATCH, DELETE and purge, each made durable before it answers.
extension JobSupervisor {
    // MARK: User actions

    /// Pauses a job and answers with its final numbers: the job stops counting the engine's progress at once, and
    /// its `job` event and answer wait until the engine has flushed the bytes received so far to disk.
    func pause(_ id: String) async throws -> JobRecord {
        try await onOwner(.pause, checking: .pause, id) { try await self.pauseHere(id) }
    }

    func resume(_ id: String) async throws -> JobRecord {
        try await onOwner(.resume, checking: .resume, id) { try await self.resumeHere(id) }
    }

    func cancel(_ id: String) async throws -> JobRecord {
        try await onOwner(.cancel, checking: .cancel, id) { try await self.cancelHere(id) }
    }

    /// Stops the job if active and removes it and its file for good.
    func delete(_ id: String) async throws {
        try requireWritableStore()
        _ = try await onOwner(.delete, checking: nil, id) {
            let job = self.jobs[id]
            try await self.deleteHere(id)
            return job
        }
    }

    /// Makes an action where the job is run (`JobSupervisor+Cluster.actsHere`): here on a single node or when this
    /// node owns the job (or took it, unowned); else forwarded to its owner, answering with the job as changed there.
    /// `checking`: the action's rule, applied first to the table's view (a conflict or no-op is not forwarded).
    private func onOwner(_ action: ForwardedAction, checking rule: JobAction?, _ id: String,
                         _ local: () async throws -> JobRecord?) async throws -> JobRecord {
        await settleHeldEnd(id)
        guard let role, var current = jobs[id] else {
            guard let job = try await local() else { throw JobsError.notFound(id: id) }
            return job
        }
        if !owned.contains(id) {
            // Another node's job, or nobody's: the table may not show that node's last change yet (its notification
            // is on its way), so the rule is applied to the row as stored now. A resume right after a pause made on the
            // owner found the job still downloading here, answered it as a no-op, and the job stayed paused.
            await refresh([id])
            guard let stored = jobs[id] else { throw JobsError.notFound(id: id) }
            current = stored
        }
        if let rule {
            switch rule.outcome(in: current.state) {
            case .conflict: throw JobsError.notApplicable(rule.conflictMessage(current.state))
            case .noOp: return current
            case .apply: break
            }
        }
        guard try await actsHere(action, on: id) else {
            if action == .delete { return current }
            guard let job = jobs[id] else { throw JobsError.notFound(id: id) }
            return job
        }
        let result = try await local()
        if !(result.map { $0.state.needsRunning && jobs[id] != nil } ?? false) {
            // Paused, ended or deleted here: no longer this node's (the commit released it; a no-op did not).
            drop(id)
            Task { _ = try? await role.store.release(ids: [id], node: role.node) }
        }
        return result ?? current
    }

    private func pauseHere(_ id: String) async throws -> JobRecord {
        guard var job = jobs[id] else { throw JobsError.notFound(id: id) }
        switch JobAction.pause.outcome(in: job.state) {
        case .conflict: throw JobsError.notApplicable(JobAction.pause.conflictMessage(job.state))
        case .noOp: return job
        case .apply: break
        }
        if job.state == .delivering {
            job.state = .paused
            job.error = nil
            job.delivery = job.delivery?.restarted()
            rates[id] = nil
            jobs[id] = job
            settleFollowers(of: id)
            let engine = self.engine
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                engine.stopDelivery(id: id) { continuation.resume() }
            }
            await settleHeldEnd(id)
            guard var latest = jobs[id] else { throw JobsError.notFound(id: id) }
            guard latest.state == .paused else { return try pauseOvertaken(latest) }
            latest.updatedAt = now()
            jobs[id] = latest
            try await commitOrUnavailable(CommitPipeline.Change(upserts: [latest], events: [jobEvent(latest)]))
            return jobs[id] ?? latest
        }
        job.state = .paused
        job.error = nil
        jobs[id] = job
        rates[id] = nil
        settleFollowers(of: id)
        let engine = self.engine
        let bytesOnDisk = await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
            engine.pause(id: id) { continuation.resume(returning: $0) }
        }
        // No transfer left to pause: it ended just before, and its end (finished, failed) may still be on its way
        // from the engine; the pause is decided once it is applied (else the job answered `paused` would later turn
        // `finished` by itself: the seam suite saw it).
        if bytesOnDisk == nil { await dependencies.eventsApplied() }
        // Finished meanwhile: the answer waits until readers see it (they saw the pause's `paused`, never published).
        await settleHeldEnd(id)
        // Cancelled, deleted, resumed or finished meanwhile: that later action's answer and events stand.
        guard var latest = jobs[id] else { throw JobsError.notFound(id: id) }
        guard latest.state == .paused else { return try pauseOvertaken(latest) }
        if let bytesOnDisk { latest.bytesReceived = bytesOnDisk }
        latest.updatedAt = now()
        jobs[id] = latest
        try await commitOrUnavailable(CommitPipeline.Change(upserts: [latest], events: [jobEvent(latest)]))
        return jobs[id] ?? latest
    }

    /// Waits until a job's end that readers do not see yet (`JobTable.holdBack`) is durable, so that an action is
    /// decided on the state the caller can see: a cancel of a job shown `downloading` whose finish is being written
    /// answers after it, with the `409` of a finished job that a `GET` then shows (the seam suite saw the `409` while
    /// the job still showed `downloading`).
    private func settleHeldEnd(_ id: String) async {
        if table.isHeldBack(id) { await commits.flush() }
    }

    /// The answer to a pause that something else overtook while it waited for the engine: a job that finished
    /// meanwhile cannot be paused (409, as for a pause asked of a finished job: found by the seam suite, which saw
    /// `200` with a finished job); another action's result stands.
    private func pauseOvertaken(_ job: JobRecord) throws(JobsError) -> JobRecord {
        guard job.state != .finished else {
            throw JobsError.notApplicable(JobAction.pause.conflictMessage(.finished))
        }
        return job
    }

    private func resumeHere(_ id: String) async throws -> JobRecord {
        let fileHere = if let job = jobs[id], job.hasDownloadedFile { await holdsDownloadedFile(job) } else { false }
        return try await act(.resume, on: id) { job in
            job.error = nil
            if job.hasDownloadedFile, fileHere {
                // Downloaded already: only the delivery is tried again.
                job.state = .delivering
                job.delivery = job.delivery?.restarted()
                self.startDelivery(job)
            } else {
                job.state = .waiting
                self.startTransfer(&job)
            }
        }
    }

    private func cancelHere(_ id: String) async throws -> JobRecord {
        try await act(.cancel, on: id) { job in
            if job.delivery != nil {
                self.engine.stopDelivery(id: id, stopped: nil)
                // A downloaded file waiting for its delivery goes with the job's partial bytes.
                if job.hasDownloadedFile { self.files.discard(jobID: id, finishedFile: job.filename) }
            }
            // A follower's reserved name holds nothing but a file made for it (shared while it was paused).
            if job.follows != nil { self.files.discard(jobID: id, finishedFile: job.filename) }
            job.state = .cancelled
            job.error = nil
            job.bytesReceived = 0
            job.finishedAt = self.now()
            self.rates[id] = nil
            self.engine.cancel(id: id)
        }
    }

    /// Changes a job's settings, URL or tags (API.md, PATCH). A job another node runs is changed by that node: the
    /// patch is checked against the job's state here first (a conflict is not forwarded), then forwarded.
    func update(_ id: String, _ patch: JobPatch) async throws -> JobRecord {
        try requireWritableStore()
        await settleHeldEnd(id)
        guard let current = jobs[id] else { throw JobsError.notFound(id: id) }
        guard role != nil, !owned.contains(id) else { return try await updateHere(id, patch) }
        if let refusal = Self.refusal(of: patch, in: current.state) { throw refusal }
        return try await updateOnOwner(id, patch, retries: 1)
    }

    /// Made where the job runs (`actsHere`): forwarded to its owner, or made here when nobody runs it; a job that
    /// stopped running on its owner before the forwarded patch arrived is patched here instead, `retries` times.
    private func updateOnOwner(_ id: String, _ patch: JobPatch, retries: Int) async throws -> JobRecord {
        guard let role else { return try await updateHere(id, patch) }
        guard try await actsHere(.patch(patch), on: id) else {
            guard let job = jobs[id] else { throw JobsError.notFound(id: id) }
            if patch.isShown(in: job) || retries == 0 { return job }
            if let refusal = Self.refusal(of: patch, in: job.state) { throw refusal }
            return try await updateOnOwner(id, patch, retries: retries - 1)
        }
        defer {
            if !(jobs[id]?.state.needsRunning ?? false) {
                drop(id)
                Task { _ = try? await role.store.release(ids: [id], node: role.node) }
            }
        }
        return try await updateHere(id, patch)
    }

    /// Why `patch` cannot be made to a job in `state` (API.md's table), or nil.
    static func refusal(of patch: JobPatch, in state: JobState) -> JobsError? {
        if patch.url != nil, case .conflict = JobAction.changeURL.outcome(in: state) {
            return .notApplicable(JobAction.changeURL.conflictMessage(state))
        }
        // Tags alone are labels: they may change in every state; anything else follows the settings' rule.
        let action: JobAction = patch.changesOnlyTags ? .changeTags : .changeSettings
        if case .conflict = action.outcome(in: state) { return .notApplicable(action.conflictMessage(state)) }
        return nil
    }

    private func updateHere(_ id: String, _ patch: JobPatch) async throws -> JobRecord {
        guard let current = jobs[id] else { throw JobsError.notFound(id: id) }
        if let refusal = Self.refusal(of: patch, in: current.state) { throw refusal }
        let action: JobAction = patch.changesOnlyTags ? .changeTags : .changeSettings
        return try await act(action, on: id) { job in
            if let tags = patch.tags { job.tags = tags }
            if let priority = patch.priority, priority != job.priority {
                job.priority = priority
                self.engine.updatePriority(id: id, priority)
            }
            if let rate = patch.maxBytesPerSecond {
                job.maxBytesPerSecond = rate
                self.engine.updateRateLimit(id: id, rate)
            }
            if let url = patch.url {
                job.url = url.normalized
                // A fresh link for the main URL makes it a source again.
                if var sources = job.sources, !sources.isEmpty {
                    sources[0] = JobSource(url: url.normalized, bytesReceived: sources[0].bytesReceived)
                    job.sources = sources
                }
                let key = self.dedupeKey(url: url, headers: job.headers)
                self.reindex(job, dedupeKey: key)
                job.dedupeKey = key
                if job.state == .waiting || job.state == .downloading {
                    self.engine.updateURL(id: id, url)
                }
            }
        }
    }

    private func deleteHere(_ id: String) async throws {
        guard let job = jobs[id] else { throw JobsError.notFound(id: id) }
        if job.delivery != nil { engine.stopDelivery(id: id, stopped: nil) }
        // A follower's reserved name holds nothing but a file made for it (shared while it was paused).
        let ownsFile = job.state == .finished || job.hasDownloadedFile || job.follows != nil
        files.discard(jobID: id, finishedFile: ownsFile ? job.filename : nil)
        removeFromTable(id)
        restarts[id] = nil
        settleFollowers(of: id)
        var change = CommitPipeline.Change()
        change.deletions = [id]
        change.events = [removedEvent(id, owner: job.ownerKey)]
        try await commitOrUnavailable(change)
    }

    /// Removes the ended jobs `selection` picks, oldest first, with their files, in one commit; a
    /// `removed` event goes out for each. Used by retention and by `DELETE /api/v1/jobs`.
    /// - Parameter access: whose jobs may go (`DELETE /api/v1/jobs` by a key removes only its own).
    func purge(_ selection: PurgeSelection, visibleTo access: JobAccess = .administrator) async throws -> [String] {
        try requireWritableStore()
        let chosen = selection.select(jobs.values.filter { access.sees($0) })
        guard !chosen.isEmpty else { return [] }
        var change = CommitPipeline.Change()
        for job in chosen {
            files.discard(jobID: job.id, finishedFile: job.state == .finished ? job.filename : nil)
            removeFromTable(job.id)
            restarts[job.id] = nil
            settleFollowers(of: job.id)
            change.deletions.append(job.id)
            change.events.append(removedEvent(job.id, owner: job.ownerKey))
        }
        try await commitOrUnavailable(change)
        logger.info("purged ended jobs", metadata: ["jobs": "\(chosen.count)"])
        return chosen.map(\.id)
    }

    /// Another file name (reserved as at creation) or number of connections for a paused job that never started
    /// (aria2's `changeOption` of `out` and `split`): nothing of the old choice exists yet, and the transfer is made
    /// from the record when the job resumes. Any other job is refused.
    func changeBeforeStart(_ id: String, filename: String?, connections: Int?) async throws -> JobRecord {
        guard let current = jobs[id] else { throw JobsError.notFound(id: id) }
        guard current.state == .paused, current.startedAt == nil, current.bytesReceived == 0, current.follows == nil else {
            throw JobsError.notApplicable("the file name and connections change only before a paused job first starts")
        }
        return try await act(.changeSettings, on: id) { job in
            if let filename, filename != job.requestedFilename {
                self.files.releaseFilename(for: id)
                job.requestedFilename = filename
                job.filename = self.files.reserveFilename(filename, for: id)
            }
            if let connections { job.connections = connections }
        }
    }

    /// Applies an action by API.md's table: a no-op answers the job unchanged, a conflict throws 409.
    func act(_ action: JobAction, on id: String, _ body: (inout JobRecord) -> Void) async throws -> JobRecord {
        try requireWritableStore()
        guard var job = jobs[id] else { throw JobsError.notFound(id: id) }
        switch action.outcome(in: job.state) {
        case .conflict: throw JobsError.notApplicable(action.conflictMessage(job.state))
        case .noOp: return job
        case .apply: break
        }
        let before = job.state
        body(&job)
        job.updatedAt = now()
        jobs[id] = job
        if job.state != before { settleFollowers(of: id) }
        try await commitOrUnavailable(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)],
                                                            notices: notices(job, leaving: before)))
        return jobs[id] ?? job
    }

    /// Refuses a change asked through the API while the store does not take writes (`CommitPipeline.failure`): made
    /// in memory, it would be answered 503 and still be written once the store is back.
    func requireWritableStore() throws {
        if let failure = commits.failure { throw JobsError.storeFailed(failure) }
    }

    func commitOrUnavailable(_ change: CommitPipeline.Change) async throws {
        // Queued here, on the actor, before suspending: enqueue order is event id order.
        let ticket = commits.submit(change)
        do { try await ticket.durable() } catch { throw JobsError.store(error) }
    }
}
