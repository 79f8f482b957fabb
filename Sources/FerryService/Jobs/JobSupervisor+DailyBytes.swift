import FerryCore
import FerryStore
import Foundation

/// A key's `bytesPerDay` (API.md, "API keys"): what its transfers fetch is counted, and while its last 24 hours hold
/// that much its new jobs are refused (`429` with `Retry-After`) and its running ones wait with `quota_exceeded`
/// until the window frees. `DailyByteQuota` keeps the counts and decides; these are the supervisor's hands. Counts
/// reach the store every few seconds (`syncDailyBytes`), so the limit holds across nodes and restarts.
extension JobSupervisor {
    /// The refusal of a new job of `owner` while its window is full, or nil.
    func dailyBytesRefusal(owner: String?) -> JobsError? {
        guard let owner, let limit = keys.key(id: owner)?.limits.bytesPerDay else { return nil }
        let now = now()
        guard let until = dailyBytes.over(limit, key: owner, at: now) else { return nil }
        return .keyDailyBytes(limit: limit, retryAfter: Self.retryAfter(until, from: now))
    }

    /// Counts bytes a transfer of `job` fetched; once its key's window is full, the key's transfers here wait.
    func countFetched(_ bytes: Int64, of job: JobRecord) {
        // A revoked key's jobs run on (the administrator's to see) but count for no key.
        guard bytes > 0, let owner = job.ownerKey, keys.key(id: owner) != nil else { return }
        dailyBytes.count(bytes, for: owner, at: now())
        holdDailyBytes(owner)
    }

    /// Writes what this node counted to the store and reads back the windows of the keys with a `bytesPerDay`, as
    /// every node counted them (and this one before a restart); then holds or lets go of their jobs here. Called
    /// every few seconds (`RunningService`) and at start; a store that fails keeps the counts for the next call.
    func syncDailyBytes() async {
        let first = DailyByteQuota.firstBucket(at: now())
        await saveDailyBytes()
        let limited = keys.limits(\.bytesPerDay)
        guard !limited.isEmpty else { return }
        do {
            let stored = try await store.keyUsage(keys: limited.keys.sorted(), since: first)
            dailyBytes.load(stored, keys: Array(limited.keys), at: now())
        } catch {
            logger.warning("cannot read what API keys fetched (bytesPerDay)", metadata: ["error": "\(error)"])
            return
        }
        for key in limited.keys.sorted() {
            holdDailyBytes(key)
            if !(dailyBytes.parked[key]?.isEmpty ?? true) { wakeDailyBytes(key) }
        }
    }

    /// Writes what this node counted since the last write (also when the service stops).
    func saveDailyBytes() async {
        let first = DailyByteQuota.firstBucket(at: now())
        let counted = dailyBytes.takeUnwritten()
        guard dailyBytes.needsWrite(counted, purgingBelow: first - 1) else { return }
        do {
            try await store.addKeyUsage(counted, purgingBefore: first - 1)
        } catch {
            dailyBytes.returnUnwritten(counted)
            logger.warning("cannot save what API keys fetched (bytesPerDay)", metadata: ["error": "\(error)"])
        }
    }

    /// While `owner`'s window is full, its running transfers here stop and wait for it.
    private func holdDailyBytes(_ owner: String) {
        let now = now()
        guard let limit = keys.key(id: owner)?.limits.bytesPerDay,
              let until = dailyBytes.over(limit, key: owner, at: now) else { return }
        let running = jobs.values.filter { other in
            other.ownerKey == owner && other.follows == nil && (role == nil || owned.contains(other.id))
                && (other.state == .downloading || other.state == .waiting) && !dailyBytes.isParked(other.id, key: owner)
        }
        for other in running {
            dailyBytes.park(other.id, key: owner)
            markWaitingForDailyBytes(other.id, limit: limit, until: until)
            engine.pause(id: other.id, stopped: nil)
        }
        scheduleDailyBytesWake(owner, at: until)
    }

    /// Whether `job`, about to be submitted, must wait for its key's window instead (it is then parked, and its
    /// `quota_exceeded` wait shown once the caller's change is made).
    func waitsForDailyBytes(_ job: JobRecord) -> Bool {
        guard let owner = job.ownerKey, let limit = keys.key(id: owner)?.limits.bytesPerDay,
              let until = dailyBytes.over(limit, key: owner, at: now()) else { return false }
        dailyBytes.park(job.id, key: owner)
        let id = job.id
        Task { self.markWaitingForDailyBytes(id, limit: limit, until: until) }
        scheduleDailyBytesWake(owner, at: until)
        return true
    }

    /// Whether `job` waits for its key's window (its transfer stopped, or never submitted): a late engine event that
    /// would show it started or queued again is dropped.
    func isParkedForDailyBytes(_ job: JobRecord) -> Bool {
        guard let owner = job.ownerKey else { return false }
        return dailyBytes.isParked(job.id, key: owner)
    }

    /// A key's limits changed (or it was revoked): its waiting jobs continue if its window now allows; a revoked
    /// key's window is dropped.
    func keyLimitsChanged(_ key: String) {
        if !(dailyBytes.parked[key]?.isEmpty ?? true) { wakeDailyBytes(key) }
        if keys.key(id: key) == nil { dailyBytes.forget(key: key) }
    }

    private func markWaitingForDailyBytes(_ id: String, limit: Int64, until: Date) {
        guard var job = jobs[id], let owner = job.ownerKey, dailyBytes.isParked(id, key: owner),
              job.state == .waiting || job.state == .downloading else { return }
        job.state = .waiting
        job.error = JobFailure(
            code: .quotaExceeded,
            message: "this key fetched \(limit) bytes or more in the last 24 hours, its bytesPerDay; "
                + "the download continues at \(Timestamp.rfc3339(until))",
            httpStatus: nil)
        job.updatedAt = now()
        rates[id] = nil
        jobs[id] = job
        commits.enqueue(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)]))
    }

    private func scheduleDailyBytesWake(_ key: String, at date: Date) {
        guard dailyBytes.needsWake(key: key, at: date) else { return }
        let delay = max(0, min(date.timeIntervalSince(now()), 86_400))
        Task {
            try? await Task.sleep(for: .seconds(delay))
            self.wakeDailyBytes(key, scheduled: true)
        }
    }

    /// Submits a key's waiting jobs again once its window allows (else looks again when it will).
    private func wakeDailyBytes(_ key: String, scheduled: Bool = false) {
        if scheduled { dailyBytes.woke(key: key) }
        if let limit = keys.key(id: key)?.limits.bytesPerDay, let until = dailyBytes.over(limit, key: key, at: now()) {
            return scheduleDailyBytesWake(key, at: until)
        }
        for id in dailyBytes.unpark(key: key) {
            guard var job = jobs[id], job.state == .waiting, job.error?.code == .quotaExceeded else { continue }
            job.error = nil
            job.updatedAt = now()
            jobs[id] = job
            commits.enqueue(CommitPipeline.Change(upserts: [job], events: [jobEvent(job)]))
            submitTransfer(job)
        }
    }

    /// Whole seconds from `now` to `date`, at least 1 and at most a day (`Retry-After`).
    static func retryAfter(_ date: Date, from now: Date) -> Int {
        Int(min(max(date.timeIntervalSince(now).rounded(.up), 1), 86_400))
    }
}
