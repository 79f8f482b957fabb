import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Engine events: what each `TransferEvent` does to its job.
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
        let before = job.state
        let userStopped = job.state == .paused || job.state == .cancelled || job.state == .finished
        var events: [ServerEvent] = []
        var persist = true
        switch event {
        case .started(_, let offset):
            guard !userStopped else { return }
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
                metrics.bytesDownloaded(progress.bytesReceived - job.bytesReceived)
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
            guard !userStopped else { return }
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
                // Downloaded and verified: the upload comes before `finished`.
                job.state = .delivering
                job.finishedAt = nil
                job.delivery = job.delivery?.restarted()
                startDelivery(job)
            }
            events.append(jobEvent(job))
        case .failed(_, let failure):
            guard !userStopped else { return }
            fail(&job, failure)
            events.append(jobEvent(job))
        case .paused(_, let bytes), .stopped(_, let bytes):
            // The bytes on disk; a pause's `job` event with them is published by `pause(_:)`, which waits for them.
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
        let change = CommitPipeline.Change(upserts: persist ? [job] : [], events: events,
                                           notices: notices(job, leaving: before))
        if case .finished = event, job.state == .finished {
            // Once the store knows the job is finished, the spool's finish record has done its work.
            let ticket = commits.submit(change), files = self.files
            Task { if (try? await ticket.durable()) != nil { files.finishRecorded(jobID: id) } }
        } else {
            commits.enqueue(change)
        }
    }
}
