import FerryCore
import FerryEngine

/// The jobs' files, as the supervisor may ask about them: the engine owns the spool, so the supervisor never
/// touches a path; it asks. `DownloadEngine` is the real one.
protocol JobFiles: Sendable {
    func reserveFilename(_ requested: String, for jobID: String) -> String
    func releaseFilename(for jobID: String)
    func bytesOnDisk(jobID: String) -> Int64
    func hasFinishedFile(named filename: String) -> Bool
    /// Whether the finished file of that name is a job's own (its size and SHA-256); `done` gets it on some queue.
    func holdsFinishedFile(named filename: String, size: Int64, sha256: String, done: @escaping @Sendable (Bool) -> Void)
    /// Where a finished file is read from (the upload of a delivery).
    func location(ofFinished filename: String) -> String
    /// Stops the job's transfer and deletes everything of it (partial file, finished file, name).
    func discard(jobID: String, finishedFile filename: String?)
    func finishRecorded(jobID: String)
    /// Whether jobs may share finished files (no object store).
    var sharesFinishedFiles: Bool { get }
    /// Gives a job its own finished file from another's; `done` gets the outcome on some queue.
    func share(_ request: SharedFile, done: @escaping @Sendable (SharedFile.Outcome) -> Void)
    /// Computes a finished file's SHA-256 that was never stored; a `.digested` event brings it.
    func digestFinished(jobID: String, filename: String)
    func recoverFiles(_ jobs: [RecoveringJob]) -> [String: RecoveredFiles]
}
