/// The multipart upload a download's parts go to while it runs, as kept in the cluster's store so that a node taking
/// the job over continues from the parts already stored: the upload, the part size, the origin's validators the bytes
/// were fetched under, and each part stored (recorded only after its upload succeeded).
public struct ObjectUploadRecord: Sendable, Equatable, Codable {
    /// A stored part, as the object store answered its upload.
    public typealias Part = UploadedPart

    /// The object's key (the job's finished object).
    public var key: String
    public var uploadID: String
    /// Bytes per part but the last (`PartPlan.partSize(for:preferred:)` of the file's size).
    public var partSize: Int64
    /// The origin's validators and the file's size the stored bytes belong to.
    public var etag: String?
    public var lastModified: String?
    public var size: Int64
    /// Stored parts, by number.
    public var parts: [Part]
    /// The key already holds an object of the stored prefix: a node taking over completed the earlier upload to read
    /// it back. It is replaced when this upload completes, and deleted with the job otherwise.
    public var prefixObject: Bool

    public init(key: String, uploadID: String, partSize: Int64, etag: String?, lastModified: String?, size: Int64,
                parts: [Part] = [], prefixObject: Bool = false) {
        self.key = key
        self.uploadID = uploadID
        self.partSize = partSize
        self.etag = etag
        self.lastModified = lastModified
        self.size = size
        self.parts = parts
        self.prefixObject = prefixObject
    }

    /// Records a stored part (replacing an earlier upload of the same number), keeping parts in order.
    mutating func store(_ part: Part) {
        parts.removeAll { $0.number == part.number }
        parts.append(part)
        parts.sort { $0.number < $1.number }
    }
}

/// Where the engine keeps the record of each running job's multipart upload (the cluster's store, fenced by job
/// ownership). Implemented by the service; any thread.
public protocol ObjectUploadLedger: Sendable {
    /// The job's record, or nil (none, or the store could not be read: the job then starts from its local bytes).
    func record(jobID: String) async -> ObjectUploadRecord?
    /// Replaces the job's record; nil removes it. Failures are the ledger's to log: a part not recorded is only
    /// fetched again by a node taking over.
    func store(_ record: ObjectUploadRecord?, jobID: String) async
    /// Whether this node may still act for the job: asked right before a delivery request sends a byte, a part is
    /// uploaded and a multipart upload is completed. False once the node cannot show it holds the job's lease (the
    /// cluster's fence): the engine then leaves the side effect undone, its bytes kept, for the job's holder.
    func mayAct(jobID: String) -> Bool
}

extension ObjectUploadLedger {
    public func mayAct(jobID: String) -> Bool { true }
}
