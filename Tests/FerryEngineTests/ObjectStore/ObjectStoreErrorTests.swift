import CCurl
import Testing
@testable import FerryEngine

/// Each object-store failure classified once: refused credentials apart and never retried, missing things,
/// a busy store worth another try, no connection at all; and the one-line message naming the store.
@Suite("ObjectStoreError")
struct ObjectStoreErrorTests {
    @Test(arguments: ["InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "ExpiredToken", "AuthorizationHeaderMalformed"])
    func refusedCredentialsAreTheirOwnKind(code: String) {
        let kind = ObjectStoreError.kind(status: 403, code: code)
        #expect(kind == .credentialsRejected)
        #expect(!ObjectStoreError(operation: .uploadPart, kind: kind, endpoint: "e", message: "").isRetryable)
    }

    @Test(arguments: [
        (403, nil, ObjectStoreError.Kind.credentialsRejected),
        (404, "NoSuchBucket", .notFound), (404, "NoSuchKey", .notFound), (404, "NoSuchUpload", .notFound), (404, nil, .notFound),
        (503, "SlowDown", .unavailable), (500, "InternalError", .unavailable), (500, nil, .unavailable), (429, nil, .unavailable),
        (408, nil, .unavailable), (400, "RequestTimeout", .unavailable),
        (400, "EntityTooSmall", .rejected), (400, "InvalidPart", .rejected), (416, "InvalidRange", .rejected), (409, nil, .rejected),
    ] as [(Int, String?, ObjectStoreError.Kind)])
    func answersAreClassifiedByCodeThenStatus(status: Int, code: String?, kind: ObjectStoreError.Kind) {
        #expect(ObjectStoreError.kind(status: status, code: code) == kind)
    }

    @Test func curlFailuresSayWhetherAConnectionWasMade() {
        #expect(ObjectStoreError.kind(curlCode: CURLE_COULDNT_CONNECT) == .unreachable)
        #expect(ObjectStoreError.kind(curlCode: CURLE_COULDNT_RESOLVE_HOST) == .unreachable)
        #expect(ObjectStoreError.kind(curlCode: CURLE_RECV_ERROR) == .transfer)
        #expect(ObjectStoreError.kind(curlCode: CURLE_OPERATION_TIMEDOUT) == .transfer)
    }

    @Test func retryableKinds() {
        func error(_ kind: ObjectStoreError.Kind) -> ObjectStoreError { .init(operation: .getObject, kind: kind, endpoint: "e", message: "") }
        #expect([.unreachable, .transfer, .unavailable].allSatisfy { error($0).isRetryable })
        #expect(![.credentialsRejected, .notFound, .rejected, .malformedResponse, .invalidRequest, .stopped].contains { error($0).isRetryable })
    }

    @Test func messageNamesStoreOperationCodeAndStatus() {
        let error = ObjectStoreError(operation: .putObject, kind: .credentialsRejected, endpoint: "http://127.0.0.1:9000/files",
                                     status: 403, code: "InvalidAccessKeyId", message: "The access key ID you provided does not exist.")
        #expect(error.description == "object store http://127.0.0.1:9000/files: PutObject credentials rejected (check AWS_ACCESS_KEY_ID, "
                + "AWS_SECRET_ACCESS_KEY, the region and the key's permissions) (InvalidAccessKeyId, HTTP 403): "
                + "The access key ID you provided does not exist.")
        let unreachable = ObjectStoreError(operation: .checkBucket, kind: .unreachable, endpoint: "http://127.0.0.1:1/files",
                                           message: "Couldn't connect to server (curl error 7)")
        #expect(unreachable.description == "object store http://127.0.0.1:1/files: ListObjectsV2 unreachable: Couldn't connect to server (curl error 7)")
    }

    @Test func responseHeadKeepsTheFinalAnswer() {
        var head = ObjectStoreResponseHead()
        for line in ["HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 206 Partial Content\r\n", "Content-Length: 100\r\n",
                     "Content-Range: bytes 0-99/12345\r\n", "ETag: \"abc\"\r\n", "X-Amz-Meta-sha256: 00ff\r\n",
                     "Content-Type: application/octet-stream\r\n", "\r\n"] {
            head.read(line)
        }
        #expect(head.status == 206)
        let object = head.object
        #expect(object.size == 12345)
        #expect(object.etag == "\"abc\"")
        #expect(object.metadata == ["sha256": "00ff"])
        #expect(object.contentType == "application/octet-stream")
    }
}
