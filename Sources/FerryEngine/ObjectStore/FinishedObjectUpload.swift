import Foundation

/// Stores one verified file as an object: `PutObject` for an empty file, else a multipart upload of its
/// `PartPlan` read from the file as it is sent, completed only when every part is stored. The SHA-256 is kept
/// as the object's `sha256` metadata.
///
/// An upload that fails or is told to stop (`proceed` answers false between parts) is aborted, so no unfinished
/// upload is left behind; the error is the one that ended it (`.stopped` when told to stop). Nothing is retried
/// here: the engine decides from `ObjectStoreError.isRetryable`.
struct FinishedObjectUpload: Sendable {
    let client: ObjectStoreClient
    let partSize: Int64

    /// The metadata name of the file's SHA-256 (lowercase hex), `x-amz-meta-sha256` on the wire.
    static let digestMetadata = "sha256"

    func upload(path: String, key: String, size: Int64, sha256: String, contentType: String?,
                proceed: @Sendable () async -> Bool) async throws(ObjectStoreError) {
        let metadata = [Self.digestMetadata: sha256]
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
        let uploadID = try await client.createMultipartUpload(key: key, contentType: contentType, metadata: metadata)
        do throws(ObjectStoreError) {
            var stored: [UploadedPart] = []
            for part in plan.parts {
                guard await proceed() else {
                    throw ObjectStoreError(operation: .uploadPart, kind: .stopped, endpoint: client.location.bucketURL,
                                           message: "the upload was stopped before part \(part.number)")
                }
                stored.append(try await client.uploadPart(key: key, uploadID: uploadID, partNumber: part.number,
                                                          descriptor: descriptor, offset: part.offset, length: part.length))
            }
            _ = try await client.completeMultipartUpload(key: key, uploadID: uploadID, parts: stored)
        } catch {
            try? await client.abortMultipartUpload(key: key, uploadID: uploadID)
            throw error
        }
    }
}
