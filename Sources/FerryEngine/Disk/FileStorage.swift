import FerryCore

/// Where finished files are kept, and the names reserved for them.
///
/// The engine is its only user (the service asks the engine: `DownloadEngine+Files`). The local spool's `files/`
/// directory (`Spool`) is the first implementation; an object store can follow behind the same calls. Partial
/// files are not part of it: they are always staged in the local spool (`partial/`), whatever keeps the finished
/// ones. Implementations are thread-safe; `store(_:)` and `removeFinished(filename:)` do I/O and run on the
/// engine's disk queue.
public protocol FileStorage: AnyObject, Sendable {
    /// Reserves `filename` (sanitized) for a job, or the first free variant ("name (1).ext"); returns it.
    func reserve(filename: String, for jobID: String) -> String
    /// Reserves `filename` or its first free variant even when the job holds it already, unless no other job holds
    /// it and no other file has it (see `Spool.reserveUnshared`): the name an object store's key will carry.
    func reserveUnshared(filename: String, for jobID: String) -> String
    /// Gives a job's name back.
    func release(jobID: String)
    /// Records a name a job already holds (start-up recovery), without collision renaming.
    func claim(filename: String, for jobID: String)
    /// Keeps a group of complete, synced partial files as finished files (a group commit); each job's final name,
    /// or why it could not be kept. A success is durable and may be reported finished.
    func store(_ finishes: [FinishingFile]) -> [String: Result<String, SystemError>]
    /// Gives a job its own finished file with the bytes of finished file `source` (a link, or a copy), under
    /// `filename` or its next free variant; returns the name. Throws with `ENOENT` when `source` is gone.
    func share(finished source: String, as filename: String, for jobID: String) throws(SystemError) -> String
    /// The size of a finished file, nil when there is none of that name.
    func sizeOfFinished(filename: String) -> Int64?
    /// Deletes a finished file.
    func removeFinished(filename: String)
    /// Where readers find a finished file (a path, for the local spool).
    func location(ofFinished filename: String) -> String
}

/// A complete download handed to `FileStorage.store(_:)`: its partial file is synced.
public struct FinishingFile: Sendable {
    public let jobID: String
    public let filename: String
    public let size: Int64
    /// Nil when the digest follows the finish (`TransferEvent.digested`).
    public let sha256: String?

    public init(jobID: String, filename: String, size: Int64, sha256: String?) {
        self.jobID = jobID
        self.filename = filename
        self.size = size
        self.sha256 = sha256
    }
}
