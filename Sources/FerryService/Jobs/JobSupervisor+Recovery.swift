import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Logging

/// Start-up: loading the jobs and putting interrupted ones back to work.
extension JobSupervisor {
    // MARK: Start-up

    /// Loads every job, puts interrupted ones back in the engine's queue, and has the engine sweep the spool.
    /// Jobs that were downloading or waiting continue from the bytes on disk; paused stay paused.
    func recover() async throws {
        if role != nil { return try await joinCluster() }
        let stored = try await store.all().sorted { $0.sequence < $1.sequence }
        var resubmit: [JobRecord] = []
        var redeliver: [JobRecord] = []
        var changed: [JobRecord] = []
        var notices: [WebhookNotice] = []
        let found = files.recoverFiles(stored.map(Self.recovering))
        jobs.reserveCapacity(stored.count)
        order.reserveCapacity(stored.count)
        for var job in stored {
            var onDisk: Int64 = 0
            switch found[job.id] {
            case .finished(let finish):
                adopt(finish, into: &job)
                changed.append(job)
                if job.delivery == nil {
                    // Without its digest, the notice waits for it (`notices(_:leaving:)`).
                    if job.sha256 != nil { notices += dependencies.webhooks.notices(.finished, for: job, at: now()) }
                } else {
                    // Downloaded just before the stop, never delivered: the delivery comes before `finished`
                    // (a kill -9 there left it `finished` with its delivery pending and nothing uploaded).
                    job.state = .delivering
                    job.finishedAt = nil
                    job.delivery = job.delivery?.restarted()
                    changed[changed.count - 1] = job
                }
            case .partial(let bytes):
                onDisk = bytes
            case nil:
                break
            }
            switch job.state {
            case .waiting, .downloading:
                if job.bytesReceived != onDisk || job.state != .waiting {
                    job.bytesReceived = onDisk
                    job.state = .waiting
                    job.updatedAt = now()
                    changed.append(job)
                }
                resubmit.append(job)
            case .delivering:
                // Interrupted uploads are sent again from the first byte.
                redeliver.append(job)
            case .paused, .failed:
                if job.hasDownloadedFile { break }
                if job.bytesReceived != onDisk {
                    job.bytesReceived = onDisk
                    changed.append(job)
                }
            case .finished, .cancelled:
                break
            }
            insertIntoTable(job)
        }
        if !changed.isEmpty {
            do {
                try await store.apply(updates: changed, deletions: [], notices: notices)
            } catch let error as JobStoreError where error.isOutOfSpace {
                // Start anyway on a full disk: the table holds these changes, and each job's next
                // change writes its whole record once there is room again.
                logger.warning("the disk is full: recovered jobs are not yet saved", metadata: ["error": "\(error)"])
            }
        }
        // Leaders first: a follower takes up its leader as it now is.
        for job in resubmit where job.follows == nil { submitTransfer(job) }
        for job in resubmit where job.follows != nil { resettle(job.id) }
        for job in redeliver { startDelivery(job) }
        // Stopped between `finished` and its digest: the digest is computed again (`.digested` stores it).
        for job in stored where job.sha256 == nil {
            guard let current = jobs[job.id], current.state == .finished, current.sha256 == nil, current.delivery == nil,
                  let filename = current.filename else { continue }
            files.digestFinished(jobID: job.id, filename: filename)
        }
        logger.info("recovered jobs", metadata: ["jobs": "\(stored.count)", "resumed": "\(resubmit.count)"])
    }

    /// With several nodes: loads every job into the table and has the engine sweep this node's spool. Nothing is
    /// submitted or changed here: the node runs the jobs it claims (`LeaseKeeper`), continuing from its bytes.
    private func joinCluster() async throws {
        let stored = try await store.all().sorted { $0.sequence < $1.sequence }
        _ = files.recoverFiles(stored.map(Self.recovering))
        jobs.reserveCapacity(stored.count)
        order.reserveCapacity(stored.count)
        for job in stored { insertIntoTable(job) }
        logger.info("loaded the cluster's jobs", metadata: ["jobs": "\(stored.count)"])
    }

    /// What the engine's spool sweep needs to know of a stored job.
    static func recovering(_ job: JobRecord) -> RecoveringJob {
        // A job whose file is downloaded and kept for a delivery (delivering, or paused or failed there) owns a
        // finished file, not a partial one: its finish record, if one is left, must not turn it `finished`.
        let standing: RecoveringJob.Standing = switch job.state {
        case .finished, .delivering: .finished
        case .cancelled: .cancelled
        default: job.hasDownloadedFile ? .finished : .unfinished
        }
        return RecoveringJob(id: job.id, filename: job.filename, standing: standing)
    }

    /// A download whose file was moved into `files/` just before a crash, when the store had not yet heard of it:
    /// the engine found the file whole, so the job is finished (no second download, no orphan).
    func adopt(_ finish: FinishRecord, into job: inout JobRecord) {
        markFinished(&job, filename: finish.filename, size: finish.size, sha256: finish.sha256)
        job.updatedAt = now()
    }

    /// The job's file is in place, whole and verified.
    func markFinished(_ job: inout JobRecord, filename: String, size: Int64, sha256: String?) {
        job.state = .finished
        job.error = nil
        job.filename = filename
        job.sha256 = sha256
        job.bytesReceived = size
        job.bytesExpected = size
        job.finishedAt = now()
    }
}
