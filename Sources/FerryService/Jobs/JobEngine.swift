import FerryCore
import FerryEngine

/// The transfers the supervisor drives. `DownloadEngine` is the real one; the supervisor's unit tests use a fake.
/// Every method returns at once; what happens arrives later as `TransferEvent`s.
protocol TransferControl: Sendable {
    func submit(_ spec: TransferSpec)
    /// Stops a transfer keeping its bytes; `stopped` gets the bytes on disk once the writer has flushed (nil when
    /// there was no such transfer).
    func pause(id: String, stopped: (@Sendable (Int64?) -> Void)?)
    /// Stops a transfer for good and deletes its partial file and its name.
    func cancel(id: String)
    func updatePriority(id: String, _ priority: Int)
    func updateRateLimit(id: String, _ bytesPerSecond: Int64?)
    func updateURL(id: String, _ url: SubmittedURL)
}

/// The jobs' files, as the supervisor may ask about them: the engine owns the spool, so the supervisor never
/// touches a path; it asks. `DownloadEngine` is the real one.
protocol JobFiles: Sendable {
    func reserveFilename(_ requested: String, for jobID: String) -> String
    func releaseFilename(for jobID: String)
    func bytesOnDisk(jobID: String) -> Int64
    func hasFinishedFile(named filename: String) -> Bool
    /// Stops the job's transfer and deletes everything of it (partial file, finished file, name).
    func discard(jobID: String, finishedFile filename: String?)
    func finishRecorded(jobID: String)
    func recoverFiles(_ jobs: [RecoveringJob]) -> [String: RecoveredFiles]
}

extension DownloadEngine: TransferControl, JobFiles {}
