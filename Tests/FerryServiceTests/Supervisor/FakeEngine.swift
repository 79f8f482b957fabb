import FerryCore
import FerryEngine
import Foundation
@testable import FerryService

/// Transfers and files for the supervisor's unit tests: records what the supervisor asked, answers from memory,
/// and lets a test play the engine's part by handing events to `JobSupervisor.apply`. No sockets, no disk.
final class FakeEngine: TransferControl, JobFiles, @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [String] = []
    private var names: [String: String] = [:]
    private var pendingPauses: [String: @Sendable (Int64?) -> Void] = [:]
    /// Bytes "on disk" by job, as `bytesOnDisk` reports them.
    var partialBytes: [String: Int64] = [:]
    /// Finished files "in files/".
    var finishedFiles: Set<String> = []
    /// The SHA-256 of finished files, by name, as `holdsFinishedFile` checks it (sizes are not checked here).
    var finishedDigests: [String: String] = [:]
    /// What `recoverFiles` answers.
    var recovered: [String: RecoveredFiles] = [:]
    /// Answer pauses at once with `partialBytes` (else the test calls `completePause`).
    var pausesAnswerAtOnce = true

    /// Every call so far, as "verb id" lines.
    var log: [String] { lock.withLock { calls } }

    private func record(_ line: String) { lock.withLock { calls.append(line) } }

    func submit(_ spec: TransferSpec) { record("submit \(spec.id)") }

    func pause(id: String, stopped: (@Sendable (Int64?) -> Void)?) {
        record("pause \(id)")
        let bytes: Int64? = lock.withLock { partialBytes[id] }
        if pausesAnswerAtOnce { stopped?(bytes) } else if let stopped { lock.withLock { pendingPauses[id] = stopped } }
    }

    /// Ends a pause the test held back, with the bytes the writer flushed.
    func completePause(_ id: String, bytes: Int64?) {
        let stopped = lock.withLock { pendingPauses.removeValue(forKey: id) }
        stopped?(bytes)
    }

    func cancel(id: String) { record("cancel \(id)") }
    func updatePriority(id: String, _ priority: Int) { record("priority \(id) \(priority)") }
    func updateRateLimit(id: String, _ bytesPerSecond: Int64?) { record("rate \(id) \(bytesPerSecond.map(String.init) ?? "none")") }
    func updateURL(id: String, _ url: SubmittedURL) { record("url \(id) \(url.redacted)") }
    func deliver(_ spec: DeliverySpec) { record("deliver \(spec.id)") }
    func stopDelivery(id: String, stopped: (@Sendable () -> Void)?) {
        record("stopDelivery \(id)")
        stopped?()
    }
    func location(ofFinished filename: String) -> String { "/files/" + filename }

    func reserveFilename(_ requested: String, for jobID: String) -> String {
        lock.withLock {
            var name = requested
            var n = 1
            while names.values.contains(name) || finishedFiles.contains(name) {
                name = "\(requested) (\(n))"
                n += 1
            }
            names[jobID] = name
            return name
        }
    }

    func releaseFilename(for jobID: String) { lock.withLock { _ = names.removeValue(forKey: jobID) } }
    func bytesOnDisk(jobID: String) -> Int64 { lock.withLock { partialBytes[jobID] ?? 0 } }
    func hasFinishedFile(named filename: String) -> Bool { lock.withLock { finishedFiles.contains(filename) } }
    func holdsFinishedFile(named filename: String, size: Int64, sha256: String, done: @escaping @Sendable (Bool) -> Void) {
        record("holds \(filename)")
        done(lock.withLock { finishedFiles.contains(filename) && finishedDigests[filename] == sha256 })
    }

    func discard(jobID: String, finishedFile filename: String?) {
        record("discard \(jobID)")
        lock.withLock {
            if let filename { finishedFiles.remove(filename) }
            partialBytes[jobID] = nil
            names[jobID] = nil
        }
    }

    func finishRecorded(jobID: String) { record("finishRecorded \(jobID)") }

    var sharesFinishedFiles: Bool { true }

    /// Links at once: `finished` when the source is "in files/" and the SHA-256 (the only checksum checked here)
    /// matches.
    func share(_ request: SharedFile, done: @escaping @Sendable (SharedFile.Outcome) -> Void) {
        record("share \(request.jobID) \(request.source)")
        let outcome: SharedFile.Outcome = lock.withLock {
            guard finishedFiles.contains(request.source) else { return .sourceGone }
            if let checksum = request.checksum, checksum.value != request.sha256 {
                return .failed(JobFailure(code: .checksumMismatch, message: "mismatch"))
            }
            finishedFiles.insert(request.filename)
            return .finished(filename: request.filename)
        }
        done(outcome)
    }
    func recoverFiles(_ jobs: [RecoveringJob]) -> [String: RecoveredFiles] { lock.withLock { recovered } }
    func digestFinished(jobID: String, filename: String) { record("digest \(jobID) \(filename)") }
}
