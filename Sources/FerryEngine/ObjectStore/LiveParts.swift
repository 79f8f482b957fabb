/// A transfer's multipart upload while it downloads (`DownloadEngine+Parts`): the record of the parts stored, what is
/// in flight, the back-off after a failed part, and the saves of the record to the ledger, kept in order.
///
/// Confined to the engine queue. `generation` changes whenever the upload is dropped (a restart from zero, a cancel,
/// the finish): completions of an older generation are ignored.
final class LiveParts: @unchecked Sendable {
    var record: ObjectUploadRecord?
    var generation = 0
    /// A `CreateMultipartUpload` is in flight.
    var creating = false
    /// Part numbers being uploaded.
    var inFlight: Set<Int> = []
    /// Failed requests in a row, and the monotonic time before which none is tried again.
    var failures = 0
    var notBefore: Double = 0
    /// The object key holds the stored prefix of an earlier upload (see `ObjectUploadRecord.prefixObject`).
    var prefixObject = false
    /// Parts a restore read back that the new upload does not hold yet (the store refused to copy them): uploaded
    /// first, and until they are all in it the ledger keeps the record the restore read them from
    /// (`PartProgress.mayRecord`), so that a node killed meanwhile costs the next one none of them.
    var awaiting: Set<Int> = []
    /// A save to the ledger runs; another is due when it ends.
    var saving = false
    var unsaved = false
    /// Run once nothing is in flight (the finish waits for them).
    var idleWaiters: [() -> Void] = []

    /// Parts the written bytes cover wait for a slot to upload, or the bytes received beyond the stored parts reach a
    /// part per connection (`PartLookahead`), while the uploads run without failing: the download pauses its
    /// connections until a part is stored (`DownloadEngine.pumpParts`), so a node that dies loses about a part per
    /// connection (and what its sockets held), however much faster the origin is than the store.
    var backlogged = false

    /// A multipart upload of the job was made or found during this submission (one created here, or a stored record
    /// read): the finish then aborts whatever unfinished uploads are left under the job's keys. Without one, a file
    /// of one part is stored with a single `PutObject` and no other node can have begun an upload of it.
    var multipartSeen = false

    var isIdle: Bool { !creating && inFlight.isEmpty }

    /// What `PartUploadPlanner` decides from.
    var planState: PartUploadPlanner.State {
        PartUploadPlanner.State(record: record, creating: creating, notBefore: notBefore, inFlight: inFlight,
                                awaiting: awaiting, failures: failures)
    }
}
