import Foundation

/// The engine is the only owner of the jobs' files: it reserves names, deletes partial and finished files, and
/// adopts what a crash left. Partial files are staged in the spool; finished ones are kept by `storage` (a
/// `FileStorage`: the spool's `files/` now). The service asks through these methods (any thread; they act on the
/// spool and the storage directly, whose own locks guard the name reservations) and never touches a path itself.
extension DownloadEngine {
    /// Reserves a free name in `files/` for the job (`name (1).ext` when taken) and returns it.
    public func reserveFilename(_ requested: String, for jobID: String) -> String {
        storage.reserve(filename: requested, for: jobID)
    }

    /// Gives back a name reserved for a job that was never created.
    public func releaseFilename(for jobID: String) {
        storage.release(jobID: jobID)
    }

    /// Bytes of the job's partial file on disk.
    public func bytesOnDisk(jobID: String) -> Int64 {
        spool.partialSize(jobID: jobID)
    }

    /// Whether a finished file of that name is in `files/`.
    public func hasFinishedFile(named filename: String) -> Bool {
        storage.sizeOfFinished(filename: filename) != nil
    }

    /// Whether the finished file of that name holds exactly a job's bytes: `size` of them, whose SHA-256 is `sha256`.
    /// On several nodes a name is unique only on the node that gave it, so a node taking over a job that is to be
    /// delivered checks the file it finds under the job's name before sending it (another job's file may have that
    /// name here). Reads on a utility queue; `done` gets the answer there.
    public func holdsFinishedFile(named filename: String, size: Int64, sha256: String,
                                  done: @escaping @Sendable (Bool) -> Void) {
        let storage = self.storage
        DispatchQueue.global(qos: .utility).async {
            guard storage.sizeOfFinished(filename: filename) == size else { return done(false) }
            let digests = try? Digest.ofFile(storage.location(ofFinished: filename))
            done(digests?.sha256 == sha256)
        }
    }

    /// Where readers find a finished file.
    public func location(ofFinished filename: String) -> String {
        storage.location(ofFinished: filename)
    }

    /// Whether a job may share another's finished file (`share(_:done:)`): not with an object store, where each job's
    /// file is an object of its own that other nodes serve.
    public var sharesFinishedFiles: Bool { objectStore == nil }

    /// Gives a job its own finished file from another's (`SharedFile`): the checksum is checked on a utility queue
    /// (hashing when needed), the link made on `diskQueue`, after any removal already queued there. `done` gets the
    /// outcome, on either queue.
    public func share(_ request: SharedFile, done: @escaping @Sendable (SharedFile.Outcome) -> Void) {
        let storage = self.storage, diskQueue = self.diskQueue
        DispatchQueue.global(qos: .utility).async {
            if let outcome = request.verify(storage: storage) { return done(outcome) }
            diskQueue.async { done(request.link(storage: storage)) }
        }
    }

    /// Computes the SHA-256 of a job's finished file whose digest was never stored (the process stopped between
    /// `.finished` and `.digested`), on `disk.backfillQueue`, one file at a time, and emits `.digested` for it. A file
    /// that cannot be read is logged and left without one.
    public func digestFinished(jobID: String, filename: String) {
        let path = storage.location(ofFinished: filename), logger = self.logger
        disk.backfillQueue.async {
            do throws(SystemError) {
                let digests = try Digest.ofFile(path)
                self.queue.async { self.emit(.digested(id: jobID, sha256: digests.sha256)) }
            } catch {
                logger.error("hashing a finished file failed", metadata: ["id": "\(jobID)", "error": "\(error)"])
            }
        }
    }

    /// Removes a job for good: stops its transfer, and deletes its partial file, its finished file `filename` (if it
    /// has one) and its name.
    public func discard(jobID: String, finishedFile filename: String?) {
        cancel(id: jobID)
        guard let filename else { return }
        deleteObject(jobID: jobID, filename: filename)
        let storage = self.storage
        diskQueue.async { storage.removeFinished(filename: filename) }
    }

    /// The store now records the job as finished: the spool's finish record has done its work. On `diskQueue`, where
    /// records are written, so the caller never waits for a log being synced.
    public func finishRecorded(jobID: String) {
        let spool = self.spool
        diskQueue.async { spool.removeFinishRecord(jobID: jobID) }
    }

    /// Sweeps the spool at start-up, before any transfer: claims the names of unfinished and finished jobs, adopts a
    /// file moved into `files/` just before a crash (when the finish record's file is there, whole), drops stale
    /// finish records, and removes partial files no unfinished job owns. Returns what it found of the unfinished jobs
    /// that have something in `partial/` (most of a big queue has nothing: they are left out).
    public func recoverFiles(_ jobs: [RecoveringJob]) -> [String: RecoveredFiles] {
        let partials = Set(spool.partialJobIDs())
        var found: [String: RecoveredFiles] = [:]
        var unfinished = Set<String>()
        for job in jobs {
            guard job.standing != .cancelled else { continue }
            // A finish record is among `partials` (which lists them): no file lookup per job otherwise.
            if job.standing == .unfinished, partials.contains(job.id), let finish = spool.finishRecord(jobID: job.id) {
                if let adopted = adopt(finish, jobID: job.id) {
                    found[job.id] = .finished(adopted)
                    continue
                }
            }
            if let name = job.filename { storage.claim(filename: name, for: job.id) }
            if job.standing == .unfinished, partials.contains(job.id) {
                unfinished.insert(job.id)
                found[job.id] = .partial(bytes: spool.partialSize(jobID: job.id))
            }
        }
        for id in partials where !unfinished.contains(id) && found[id] == nil {
            spool.removePartial(jobID: id)
        }
        return found
    }

    /// The finished file a record names, if it is there whole: its name is claimed and the partial file removed.
    private func adopt(_ finish: FinishRecord, jobID: String) -> FinishRecord? {
        guard storage.sizeOfFinished(filename: finish.filename) == finish.size else {
            spool.removeFinishRecord(jobID: jobID)
            return nil
        }
        storage.claim(filename: finish.filename, for: jobID)
        spool.removePartial(jobID: jobID)
        logger.notice("adopted a file finished just before a restart", metadata: ["job": "\(jobID)", "file": "\(finish.filename)"])
        return finish
    }
}
