/// The cluster's object store as the engine uses it: the client finished files (and parts) are stored with, and
/// where running jobs' multipart uploads are recorded (`DownloadEngine+Parts`). Set once, in `init`.
struct EngineObjects {
    let client: ObjectStoreClient
    let ledger: (any ObjectUploadLedger)?
}
