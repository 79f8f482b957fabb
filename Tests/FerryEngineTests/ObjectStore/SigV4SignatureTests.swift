import Foundation
import Testing
@testable import FerryEngine

@Suite("SigV4Signature")
struct SigV4SignatureTests {
    @Test func libcurlMisordersOnlyHeadersWhoseNameExtendsAnotherWithADash() {
        #expect(SigV4Signature.libcurlMisorders(["x-amz-copy-source: /b/k", "x-amz-copy-source-range: bytes=0-9"]))
        #expect(SigV4Signature.libcurlMisorders(["X-Amz-Copy-Source-Range: bytes=0-9", "X-Amz-Copy-Source: /b/k"]))
        #expect(!SigV4Signature.libcurlMisorders(["x-amz-copy-source: /b/k"]), "CopyObject without a range")
        #expect(!SigV4Signature.libcurlMisorders(["x-amz-copy-source: /b/k", "x-amz-metadata-directive: REPLACE",
                                                  "Content-Type: text/plain", "x-amz-meta-sha256: ab"]))
        #expect(!SigV4Signature.libcurlMisorders(["Range: bytes=0-9"]))
        #expect(!SigV4Signature.libcurlMisorders([]))
    }

    @Test func everyRequestLibcurlMisordersIsAnUploadPartCopy() throws {
        let location = try ObjectStoreLocation(parsing: "s3://bucket-a/p?endpoint=http://127.0.0.1:9000")
        let copy = ObjectStoreRequest.uploadPartCopy(location, key: "jobs/j1/a b.bin", uploadID: "u", partNumber: 2,
                                                     sourceKey: "jobs/j1/a b.bin", range: 0...9)
        #expect(SigV4Signature.libcurlMisorders(copy.headers))
        let metadata = try ObjectStoreRequest.replaceMetadata(location, key: "k", contentType: "text/plain", metadata: ["sha256": "ab"])
        #expect(!SigV4Signature.libcurlMisorders(metadata.headers))
        #expect(!SigV4Signature.libcurlMisorders(ObjectStoreRequest.getObject(location, key: "k", range: 0...9).headers))
    }

    /// The expected value is botocore's (`S3SigV4Auth`, 1.43) for the same request, key and time.
    @Test func signsAsBotocoreDoes() {
        let signature = SigV4Signature(accessKeyID: "AKID", secretAccessKey: "SECRET/KEY", region: "us-east-1")
        let lines = signature.headers(
            method: "PUT", url: "http://127.0.0.1:9000/bucket-a/jobs/j1/a%20b.bin?partNumber=2&uploadId=u%2B1",
            headers: ["x-amz-copy-source: /bucket-a/jobs/j1/a%20b.bin", "x-amz-copy-source-range: bytes=5242880-10485759"],
            payload: [], date: Date(timeIntervalSince1970: 1_795_566_605))
        #expect(lines == [
            "Host: 127.0.0.1:9000",
            "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "x-amz-date: 20261125T003005Z",
            "Authorization: AWS4-HMAC-SHA256 Credential=AKID/20261125/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;x-amz-content-sha256;x-amz-copy-source;x-amz-copy-source-range;x-amz-date, "
                + "Signature=44f2a1885b7009078f71d376d285966bdeb055a8bb5bf50dfd12e4feb61ba0b1",
        ])
    }

    @Test func splitsAURLIntoAuthorityPathAndQuery() {
        #expect(SigV4Signature.split("http://h:9/b/k?a=1&b=") == ("h:9", "/b/k", "a=1&b="))
        #expect(SigV4Signature.split("https://h/b") == ("h", "/b", ""))
        #expect(SigV4Signature.split("http://h?x=1") == ("h", "/", "x=1"))
    }
}
