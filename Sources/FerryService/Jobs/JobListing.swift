import FerryStore
import Foundation

/// The few words lists count, order and filter a job by, taken from the record readers see (`JobTable` keeps one per
/// job, renewed whenever that record changes), so that a pass over every job reads these rather than copying each
/// record with its strings: aria2's lists and counts (`Aria2Jobs`) are answered from them. Plain bytes; pure.
struct JobListing: Sendable, Equatable {
    let state: JobState
    /// The number the table gives the API key that owns the job (`JobTable.forEachListed(onlyKey:)` matches by it); 0 for
    /// the administrator's. A number, not the key, so that a listing is plain bytes, copied without reference counting.
    let owner: UInt32
    let sequence: Int64
    /// What lists of jobs in its state order it by, before `sequence`: its priority, negated, while waiting or paused
    /// (the engine starts higher ones first); when it ended (`finishedAt`, else `updatedAt`, in seconds since the
    /// reference date) once finished, failed or cancelled; 0 while running. One number for all, so a listing stays small
    /// (the table keeps one per job).
    let rank: Double
    /// The job's gid as a number (`JobGID.value`).
    let gid: UInt64
    /// Names the record this listing was taken from: a new number each time the record readers see changes, never
    /// reused in the table's life, so whatever was made from a record (a status object already written,
    /// `Aria2StatusCache`) is still right while the version is the same.
    let version: UInt64

    init(_ job: JobRecord, gid: UInt64, owner: UInt32, version: UInt64) {
        state = job.state
        self.owner = owner
        sequence = job.sequence
        switch job.state {
        case .waiting, .paused: rank = -Double(job.priority)
        case .finished, .failed, .cancelled: rank = (job.finishedAt ?? job.updatedAt).timeIntervalSinceReferenceDate
        case .downloading, .delivering: rank = 0
        }
        self.gid = gid
        self.version = version
    }
}
