import Foundation

/// Stores one verified file as an object: `PutObject` for a file of at most one part (read from the file as it is
/// sent: one request, not three), else a multipart upload of its `PartPlan` read from the file as it is sent,
/// completed only when every part is stored. The SHA-256 is kept as the object's `sha256` metadata.
///
/// An upload that fails or is told to stop (`proceed` answers false between parts) is aborted, so no unfinished
/// upload is left behind; the error is the one that ended it (`.stopped` when told to stop). Nothing is retried
/// here: the engine decides from `ObjectStoreError.isRetryable`.
struct FinishedObjectUpload: Sendable {
    let client: ObjectStoreClient
    let partSize: Int64

    /// The metadata name of the file's SHA-256 (lowercase hex), `x-amz-meta-sha256` on the wire.
    static let digestMetadata = "sha256"

    /// - Parameter existing: the upload the download's parts went to while it ran (`DownloadEngine+Parts`): its parts
    ///   of the right size are not sent again, only the others, and a failure leaves it for the engine to retry or
    ///   abort. Without it, a new upload is made, and aborted on failure.
    /// - Parameter sha256: the object's `sha256` metadata; nil: none (the engine computes it before storing a
    ///   file in the object store, so this does not happen there today).
    /// Whether storing a file of `size` without an existing upload makes no multipart upload (one `PutObject`).
    func isSingleRequest(size: Int64) -> Bool { PartPlan(size: size, partSize: partSize).parts.count <= 1 }

    func upload(path: String, key: String, size: Int64, sha256: String?, contentType: String?,
                existing: (uploadID: String, parts: [UploadedPart])? = nil,
                proceed: @Sendable () async -> Bool) async throws(ObjectStoreError) {
        let metadata = sha256.map { [Self.digestMetadata: $0] } ?? [:]
        let plan = PartPlan(size: size, partSize: partSize)
        guard !plan.parts.isEmpty else {
            _ = try await client.putObject(key: key, bytes: [], contentType: contentType, metadata: metadata)
            return
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw ObjectStoreError(operation: .uploadPart, kind: .invalidRequest, endpoint: client.location.bucketURL,
                                   message: "cannot open the finished file: \(SystemError("open", path))")
        }
        defer { close(descriptor) }
        if existing == nil, plan.parts.count == 1 {
            guard await proceed() else {
                throw ObjectStoreError(operation: .putObject, kind: .stopped, endpoint: client.location.bucketURL,
                                       message: "the upload was stopped before it began")
            }
            _ = try await client.putObject(key: key, descriptor: descriptor, offset: 0, length: size, contentType: contentType,
                                           metadata: metadata)
            return
        }
        let uploadID: String
        if let existing { uploadID = existing.uploadID } else {
            uploadID = try await client.createMultipartUpload(key: key, contentType: contentType, metadata: metadata)
        }
        do throws(ObjectStoreError) {
            var stored: [UploadedPart] = []
            for part in plan.parts {
                if let kept = existing?.parts.first(where: { $0.number == part.number && $0.size == part.length }) {
                    stored.append(kept)
                    continue
                }
                guard await proceed() else {
                    throw ObjectStoreError(operation: .uploadPart, kind: .stopped, endpoint: client.location.bucketURL,
                                           message: "the upload was stopped before part \(part.number)")
                }
                stored.append(try await client.uploadPart(key: key, uploadID: uploadID, partNumber: part.number,
                                                          descriptor: descriptor, offset: part.offset, length: part.length))
            }
            guard await proceed() else {
                throw ObjectStoreError(operation: .completeMultipartUpload, kind: .stopped, endpoint: client.location.bucketURL,
                                       message: "the upload was stopped before its completion")
            }
            _ = try await client.completeMultipartUpload(key: key, uploadID: uploadID, parts: stored)
        } catch {
            if existing == nil { try? await client.abortMultipartUpload(key: key, uploadID: uploadID) }
            throw error
        }
    }
}
