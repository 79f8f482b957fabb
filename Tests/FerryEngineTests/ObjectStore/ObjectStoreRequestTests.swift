import Testing
@testable import FerryEngine

/// Building S3 requests without sockets: methods, path-style URLs with keys encoded once, queries sorted and
/// always with `=`, headers, bodies; metadata that a header could not carry is refused.
@Suite("ObjectStoreRequest")
struct ObjectStoreRequestTests {
    let location = try! ObjectStoreLocation(parsing: "s3://files/cache?endpoint=http://127.0.0.1:9000&region=eu-west-1")

    @Test func encodesKeysSegmentBySegment() {
        #expect(ObjectStoreRequest.encodedKey("cache/j1/a b+c~d_e-f.g") == "cache/j1/a%20b%2Bc~d_e-f.g")
        #expect(ObjectStoreRequest.encodedKey("j/é 100%.iso") == "j/%C3%A9%20100%25.iso")
        #expect(ObjectStoreRequest.encodedKey("j/a?b#c&d=e") == "j/a%3Fb%23c%26d%3De")
    }

    @Test func checkBucketIsAnEmptyListing() {
        let request = ObjectStoreRequest.checkBucket(location)
        #expect(request.method == .get)
        #expect(request.url == "http://127.0.0.1:9000/files?list-type=2&max-keys=0")
        #expect(request.body == .none)
    }

    @Test func createMultipartUploadWritesUploadsWithAnEqualsSignAndMetadata() throws {
        let request = try ObjectStoreRequest.createMultipartUpload(location, key: "cache/j1/a b.iso", contentType: "application/x-iso9660-image",
                                                                    metadata: ["sha256": "ab12", "job-id": "j1"])
        #expect(request.method == .post)
        #expect(request.url == "http://127.0.0.1:9000/files/cache/j1/a%20b.iso?uploads=")
        #expect(request.headers == ["Content-Type: application/x-iso9660-image", "x-amz-meta-job-id: j1", "x-amz-meta-sha256: ab12"])
        #expect(request.body == .bytes([]))
        #expect(request.operation == .createMultipartUpload)
    }

    @Test func uploadPartSortsItsQueryAndStreamsFromTheFile() {
        let request = ObjectStoreRequest.uploadPart(location, key: "k", uploadID: "id/with+chars=", partNumber: 3,
                                                    descriptor: 7, offset: 10 << 20, length: 5 << 20)
        #expect(request.method == .put)
        #expect(request.url == "http://127.0.0.1:9000/files/k?partNumber=3&uploadId=id%2Fwith%2Bchars%3D")
        #expect(request.body == .file(descriptor: 7, offset: 10 << 20, length: 5 << 20))
        #expect(request.body.length == 5 << 20)
    }

    @Test func listPartsPagesAfterAMarker() {
        #expect(ObjectStoreRequest.listParts(location, key: "k", uploadID: "u", marker: nil).url
                == "http://127.0.0.1:9000/files/k?max-parts=1000&uploadId=u")
        #expect(ObjectStoreRequest.listParts(location, key: "k", uploadID: "u", marker: 1000).url
                == "http://127.0.0.1:9000/files/k?max-parts=1000&part-number-marker=1000&uploadId=u")
    }

    @Test func listsTheUnfinishedUploadsUnderAPrefix() {
        let request = ObjectStoreRequest.listMultipartUploads(location, prefix: "jobs/j1/")
        #expect(request.method == .get)
        #expect(request.url == "http://127.0.0.1:9000/files?prefix=jobs%2Fj1%2F&uploads=")
    }

    @Test func completeSendsThePartsInOrder() {
        let parts = [UploadedPart(number: 2, etag: "\"b\"", size: 1), UploadedPart(number: 1, etag: "\"a&\"", size: 5)]
        let request = ObjectStoreRequest.completeMultipartUpload(location, key: "k", uploadID: "u", parts: parts)
        #expect(request.method == .post)
        #expect(request.url == "http://127.0.0.1:9000/files/k?uploadId=u")
        #expect(request.headers == ["Content-Type: application/xml"])
        let expected = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
            + "<Part><PartNumber>1</PartNumber><ETag>&quot;a&amp;&quot;</ETag></Part>"
            + "<Part><PartNumber>2</PartNumber><ETag>&quot;b&quot;</ETag></Part></CompleteMultipartUpload>"
        #expect(request.body == .bytes(Array(expected.utf8)))
    }

    @Test func objectRequests() throws {
        #expect(ObjectStoreRequest.abortMultipartUpload(location, key: "k", uploadID: "u").method == .delete)
        #expect(ObjectStoreRequest.abortMultipartUpload(location, key: "k", uploadID: "u").url == "http://127.0.0.1:9000/files/k?uploadId=u")
        #expect(ObjectStoreRequest.headObject(location, key: "a/b").method == .head)
        #expect(ObjectStoreRequest.deleteObject(location, key: "a/b").url == "http://127.0.0.1:9000/files/a/b")
        let whole = ObjectStoreRequest.getObject(location, key: "k", range: nil)
        #expect(whole.method == .get && whole.headers.isEmpty)
        #expect(ObjectStoreRequest.getObject(location, key: "k", range: 100...199).headers == ["Range: bytes=100-199"])
        let put = try ObjectStoreRequest.putObject(location, key: "k", body: .bytes([1, 2]), contentType: nil, metadata: ["sha256": "x"])
        #expect(put.method == .put && put.headers == ["x-amz-meta-sha256: x"] && put.body.length == 2)
    }

    @Test(arguments: [
        (["Sha256": "x"], "metadata name \"Sha256\""),
        (["a_b": "x"], "metadata name \"a_b\""),
        (["": "x"], "metadata name \"\""),
        (["name": "a\r\nx-amz-meta-evil: 1"], "metadata \"name\" has characters"),
        (["name": "é"], "metadata \"name\" has characters"),
    ])
    func refusesMetadataAHeaderCannotCarry(metadata: [String: String], expected: String) {
        #expect {
            _ = try ObjectStoreRequest.createMultipartUpload(location, key: "k", contentType: nil, metadata: metadata)
        } throws: { error in
            guard let error = error as? ObjectStoreError else { return false }
            return error.kind == .invalidRequest && error.operation == .createMultipartUpload && error.message.contains(expected)
        }
    }
}
