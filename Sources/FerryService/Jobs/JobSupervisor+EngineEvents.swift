import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Engine events: what each `TransferEvent` does to its job; and jobs sharing another's transfer (`SharedTransfers`),
/// whose own files the engine makes from their leader's and whose outcome goes the way of a download's.
extension JobSupervisor {
    // MARK: Engine events

    /// Applies one engine event. Events of jobs that were deleted, cancelled or paused meanwhile are
    /// reduced to what still matters (bytes on disk), never to a state the user left.
    func apply(_ event: TransferEvent) {
        let id = event.id
        guard var job = jobs[id] else { return }
        // With several nodes, only the jobs this node owns are its to change (a stopped one's last events are dropped).
        if role != nil, !owned.contains(id) { return }
        // Nor while it cannot show it holds their leases (checked here too: the watcher may not have run yet). A
        // delivery the target has taken is still recorded: the commit carries this node's epoch, which the store
        // refuses if another node took the job since, and otherwise spares the next owner sending it again.
        if let fence = role?.fence, !fence.holds() {
            fenceNow(fence)
            guard case .delivered = event else { return }
        }
        let original = job, before = job.state
        let userStopped = job.state == .paused || job.state == .cancelled || job.state == .finished
        var events: [ServerEvent] = []
        var persist = true
        var digestNotices: [WebhookNotice] = []
        var digested = false
        /// Bytes this event says the transfer fetched since the last one counted (a key's `bytesPerDay`).
        var fetched: Int64 = 0
        switch event {
        case .started(_, let offset):
            // A job parked for its key's bytesPerDay whose start was on its way when the engine was told to stop it.
            guard !userStopped, !isParkedForDailyBytes(job) else { return }
            job.state = .downloading
            job.error = nil
            job.attempts += 1
            job.bytesReceived = offset
            if job.startedAt == nil { job.startedAt = now() }
            rates[id] = LiveRates()
            events.append(jobEvent(job))
        case .responded(_, let metadata):
            guard job.state != .cancelled else { return }
            job.finalURL = metadata.finalURL
            job.filename = metadata.filename
            job.contentType = metadata.contentType ?? job.contentType
            job.bytesExpected = metadata.bytesExpected
            job.etag = metadata.etag
            job.lastModified = metadata.lastModified
            dependencies.onResponded?(job, metadata)
            events.append(jobEvent(job))
        case .restarted(_, let reason):
            guard !userStopped else { return }
            job.bytesReceived = 0
            if var sources = job.sources {
                for index in sources.indices { sources[index].bytesReceived = 0 }
                job.sources = sources
            }
            restarts[id, default: 0] += 1
            events.append(jobEvent(job, restartReason: reason))
        case .progress(_, let progress):
            guard job.state == .downloading else { return }
            if progress.bytesReceived > job.bytesReceived {
                fetched = progress.bytesReceived - job.bytesReceived
                metrics.bytesDownloaded(fetched)
            }
            job.bytesReceived = progress.bytesReceived
            job.bytesExpected = progress.bytesExpected ?? job.bytesExpected
            if var sources = job.sources, sources.count == progress.sourceBytes.count {
                for (index, bytes) in progress.sourceBytes.enumerated() { sources[index].bytesReceived = bytes }
                job.sources = sources
            }
            let live = LiveRates(speed: progress.bytesPerSecond, eta: progress.eta)
            rates[id] = live
            jobs[id] = job
            persist = false
            events.append(progressEvent(job, live))
        case .sourceDropped(_, let index, let failure):
            guard var sources = job.sources, sources.indices.contains(index) else { return }
            sources[index].error = failure
            job.sources = sources
            metrics.transferError(failure.code)
            events.append(jobEvent(job))
        case .waiting(_, let reason):
            guard !userStopped, !isParkedForDailyBytes(job) else { return }
            let error: JobFailure? = switch reason {
            case .queued: nil
            case .diskFull:
                JobFailure(code: .diskFull,
                         message: "free space is below the reserve (or a write hit ENOSPC); the download continues when space returns",
                         httpStatus: nil)
            case .retrying(let at, let attempt, let failure):
                JobFailure(code: .retrying,
                         message: "attempt \(attempt) failed (\(failure.code): \(failure.message)); retrying at \(Timestamp.rfc3339(at))",
                         httpStatus: failure.httpStatus)
            }
            // Bytes on disk are the truth: after a write hit ENOSPC, or a failed attempt, the last
            // progress counted bytes that were received but never written.
            if case .queued = reason {} else { job.bytesReceived = files.bytesOnDisk(jobID: id) }
            if job.state == .waiting && job.error == error && jobs[id]?.bytesReceived == job.bytesReceived { return }
            if case .retrying(_, _, let failure) = reason { metrics.transferError(failure.code) }
            if case .diskFull = reason { metrics.transferError(.diskFull) }
            job.state = .waiting
            job.error = error
            rates[id] = nil
            events.append(jobEvent(job))
        case .storing(_, let at, let attempt, let failure):
            // Downloaded and verified; the file waits for the object store, as a delivery waits for its target.
            guard job.state == .downloading else { return }
            job.bytesReceived = job.bytesExpected ?? job.bytesReceived
            job.error = JobFailure(code: .retrying,
                                   message: "the file is downloaded and verified, but storing it failed (attempt \(attempt): \(failure.message)); retrying at \(Timestamp.rfc3339(at))",
                                   httpStatus: nil)
            rates[id] = nil
            metrics.transferError(failure.code)
            events.append(jobEvent(job))
        case .finished(_, let file):
            guard job.state != .cancelled else { return }
            let pausedMeanwhile = job.state == .paused
            if before == .downloading { fetched = max(0, file.size - job.bytesReceived) }
            markFinished(&job, filename: file.filename, size: file.size, sha256: file.sha256)
            job.contentType = file.contentType ?? job.contentType
            job.finalURL = file.finalURL
            job.etag = file.etag ?? job.etag
            job.lastModified = file.lastModified ?? job.lastModified
            if var sources = job.sources, sources.count == file.sourceBytes.count {
                for (index, bytes) in file.sourceBytes.enumerated() { sources[index].bytesReceived = bytes }
                job.sources = sources
            }
            rates[id] = nil
            if job.delivery != nil {
                // Downloaded and verified: the upload comes before `finished`. A job paused while its last bytes came
                // in stays paused with its file (its pause, allowed while delivering, stands): resume delivers it.
                job.finishedAt = nil
                job.delivery = job.delivery?.restarted()
                if pausedMeanwhile {
                    job.state = .paused
                } else {
                    job.state = .delivering
                    startDelivery(job)
                }
            }
            events.append(jobEvent(job))
        case .digested(_, let sha256):
            // The digest of a file finished without it: shown with a `job` event; the `job.finished` notice, held
            // back for it (`notices(_:leaving:)`), goes now; followers waiting for it share the file.
            guard job.sha256 == nil, job.state == .finished, job.filename != nil else { return }
            job.sha256 = sha256
            digested = true
            events.append(jobEvent(job))
            digestNotices = notices(job, leaving: .downloading)
        case .failed(_, let failure):
            guard !userStopped else { return }
            fail(&job, failure)
            events.append(jobEvent(job))
        case .paused(_, let bytes), .stopped(_, let bytes):
            // The bytes on disk; a pause's `job` event with them is published by `pause(_:)`, which waits for them.
            fetched = max(0, bytes - job.bytesReceived)
            job.bytesReceived = bytes
            rates[id] = nil
        case .delivering(_, let progress):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            let resumed = delivery.state != .sending
            delivery.state = .sending
            delivery.bytesSent = progress.bytesSent
            delivery.bytesTotal = progress.bytesTotal
            if resumed {
                delivery.attempts += 1
                delivery.error = nil
                job.error = nil
            }
            job.delivery = delivery
            let live = LiveRates(speed: progress.bytesPerSecond, eta: progress.eta)
            rates[id] = live
            if resumed {
                events.append(jobEvent(job))
            } else {
                jobs[id] = job
                persist = false
                events.append(progressEvent(job, live))
            }
        case .deliveryWaiting(_, let at, let attempt, let failure):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            delivery.state = .pending
            delivery.bytesSent = 0
            delivery.httpStatus = failure.httpStatus
            delivery.error = failure
            job.delivery = delivery
            job.error = JobFailure(code: .retrying,
                                   message: "delivery attempt \(attempt) failed (\(failure.message)); retrying at \(Timestamp.rfc3339(at))",
                                   httpStatus: failure.httpStatus)
            rates[id] = nil
            metrics.transferError(failure.code)
            events.append(jobEvent(job))
        case .delivered(_, let status):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            delivery.state = .delivered
            delivery.httpStatus = status
            delivery.error = nil
            delivery.bytesSent = delivery.bytesTotal ?? delivery.bytesSent
            delivery.deliveredAt = now()
            job.delivery = delivery
            job.state = .finished
            job.error = nil
            job.finishedAt = now()
            rates[id] = nil
            if delivery.deleteAfter, let filename = job.filename {
                files.discard(jobID: id, finishedFile: filename)
            }
            events.append(jobEvent(job))
        case .deliveryFailed(_, let failure):
            guard job.state == .delivering, var delivery = job.delivery else { return }
            delivery.state = .failed
            delivery.httpStatus = failure.httpStatus
            delivery.error = failure
            job.delivery = delivery
            fail(&job, failure)
            events.append(jobEvent(job))
        }
        job.updatedAt = now()
        jobs[id] = job
        settleOwnership(job)
        var change = CommitPipeline.Change(upserts: persist ? [job] : [], events: events,
                                           notices: notices(job, leaving: before) + digestNotices)
        if case .finished = event, job.state == .finished || job.hasDownloadedFile {
            // Once the store knows the file is finished (the job finished, or delivering it), the spool's finish
            // record has done its work: a restart must not adopt the file again as a finished job.
            let files = self.files
            change.onDurable.append { files.finishRecorded(jobID: id) }
        }
        if job.state != before, job.state == .finished || job.state == .failed {
            // An end is shown once it is durable: a reader told `finished` (or a delivery done) before that could
            // see a crash take it back, and the delivery sent again.
            let after = (events.map(\.id).min() ?? ids.lastAllocated + 1) - 1
            let table = self.table, hold = table.holdBack(id, showing: original, after: after)
            change.onDurable.append { table.release(id, hold: hold) }
        }
        commits.enqueue(change)
        if job.state != before || digested { settleFollowers(of: id) }
        countFetched(fetched, of: job)
    }

    // MARK: Shared transfers

    /// Starts a waiting job's transfer; a job following another's (`follows`) waits for it, shares its finished
    /// file, or, that transfer stopped or gone, gets one of its own (`follows` cleared in `job`, which the caller
    /// stores and commits).
    func startTransfer(_ job: inout JobRecord, url: SubmittedURL? = nil) {
        if let leaderID = job.follows {
            let leader = jobs[leaderID]
            switch SharedTransfers.step(leader: leader, fileExists: leader?.filename.map(files.hasFinishedFile(named:)) ?? false) {
            case .wait:
                sharing.wait(job.id, for: leaderID)
                return
            case .share:
                let id = job.id
                // Once the caller has stored the job.
                Task { self.shareLeaderFile(into: id) }
                return
            case .runAlone:
                job.follows = nil
            }
        }
        submitTransfer(job, url: url)
    }

    /// Takes up a waiting follower again (its leader changed): `startTransfer`, storing what changed.
    func resettle(_ id: String) {
        guard var job = jobs[id], job.state == .waiting, job.follows != nil else { return }
        startTransfer(&job)
        guard job.follows == nil else { return }
        job.updatedAt = now()
        jobs[id] = job
        commits.enqueue(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)]))
    }

    /// The followers waiting for a job that just changed state, or was removed, take it up again.
    func settleFollowers(of id: String) {
        for follower in sharing.takeFollowers(of: id) { resettle(follower) }
    }

    /// Has the engine make a waiting follower's own file from its leader's, once the name it gets is reserved and
    /// durable (a restart then finds the name the file has).
    func shareLeaderFile(into id: String) {
        guard let job = jobs[id], job.state == .waiting, let leaderID = job.follows, let leader = jobs[leaderID],
              let source = leader.filename, let sha256 = leader.sha256,
              SharedTransfers.step(leader: leader, fileExists: files.hasFinishedFile(named: source)) == .share
        else { return resettle(id) }
        guard sharing.beginMaking(id) else { return }
        var named = job
        var change = CommitPipeline.Change()
        if named.filename == nil {
            named.filename = files.reserveFilename(source, for: id)
            named.updatedAt = now()
            jobs[id] = named
            change = CommitPipeline.Change(upserts: [named], events: [jobEvent(named)])
        }
        let request = SharedFile(jobID: id, source: source, filename: named.filename ?? source, sha256: sha256,
                                 checksum: job.checksum)
        let ticket = commits.submit(change), files = self.files
        Task {
            guard (try? await ticket.durable()) != nil else { return self.sharingFailed(id) }
            files.share(request) { outcome in Task { await self.shared(id, outcome, from: leader) } }
        }
    }

    /// The store failed before the follower's file was asked for: it stays waiting (a restart takes it up again).
    private func sharingFailed(_ id: String) {
        sharing.endMaking(id)
    }

    /// A follower's own file is made, or not: it finishes (delivery and notices follow as for a download), fails
    /// (`checksum_mismatch`: only this job), or, its leader's file gone, takes up its leader again.
    func shared(_ id: String, _ outcome: SharedFile.Outcome, from leader: JobRecord) {
        sharing.endMaking(id)
        guard var job = jobs[id], job.state == .waiting, job.follows == leader.id else {
            // Cancelled or deleted meanwhile: the file made for it goes with it.
            if case .finished(let name) = outcome, (jobs[id]?.state ?? .cancelled) == .cancelled {
                files.discard(jobID: id, finishedFile: name)
            }
            return
        }
        switch outcome {
        case .finished(let name):
            job.follows = nil
            job.startedAt = job.startedAt ?? now()
            jobs[id] = job
            let file = FinishedFile(
                filename: name, path: files.location(ofFinished: name), size: leader.bytesExpected ?? leader.bytesReceived,
                sha256: leader.sha256, contentType: leader.contentType, finalURL: leader.finalURL ?? leader.url,
                etag: leader.etag, lastModified: leader.lastModified)
            apply(.finished(id: id, file))
        case .failed(let failure):
            apply(.failed(id: id, failure))
        case .sourceGone:
            resettle(id)
        }
    }
}
