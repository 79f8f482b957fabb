/// Room the spool has for downloads (the service's `--spool-quota`), asked by the engine before a response's first
/// body byte and before a file is preallocated, so that a file which cannot fit never takes space.
///
/// Called on the engine queue: implementations must be quick and safe from any thread.
public protocol SpoolAllowance: Sendable {
    /// Claims room for the job's file of `size` bytes (nil while its length is unknown), replacing what the job
    /// claimed before.
    func claim(jobID: String, size: Int64?) -> SpoolClaim
    /// Gives back what the job claimed: its transfer ended (its bytes on disk still count where they stay).
    func release(jobID: String)
}

