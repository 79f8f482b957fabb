import FerryTestSupport
import Foundation
import Testing
@testable import FerryEngine

/// `ObjectStoreClient` on a real engine's multi handle against a real S3 gateway (SeaweedFS on 127.0.0.1, each
/// test in a bucket of its own): a multipart round trip byte-identical by SHA-256 with a ranged GET, listing the
/// parts of an unfinished upload, abort, put/head/delete, and the failures an operator meets first: wrong
/// credentials (a clear error at once, no retries), a missing bucket, an endpoint nobody listens on.
@Suite("ObjectStoreClient", .serialized, .enabled(if: !SeaweedServer.isSkipped))
struct ObjectStoreClientTests {
    static let mebibyte = 1 << 20

    /// Bytes a sink received, from the engine queue.
    final class ByteCollector: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [UInt8] = []

        func append(_ chunk: UnsafeRawBufferPointer) -> ObjectBodyDisposition {
            lock.lock()
            defer { lock.unlock() }
            bytes.append(contentsOf: chunk)
            return .consumed
        }

        var collected: [UInt8] {
            lock.lock()
            defer { lock.unlock() }
            return bytes
        }
    }

    /// Runs `body` with a client of a fresh bucket on a fresh engine; stops the client and the engine afterwards.
    private func withClient(bucket: String? = nil, endpoint: String? = nil,
                            credentials: ObjectStoreCredentials = .init(accessKeyID: SeaweedServer.accessKey, secretAccessKey: SeaweedServer.secretKey),
                            _ body: (ObjectStoreClient, EngineHarness) async throws -> Void) async throws {
        let server = try await SeaweedServer.shared()
        let bucket = if let bucket { bucket } else { try await server.createBucket() }
        let location = try ObjectStoreLocation(parsing: "s3://\(bucket)/ferry-test?endpoint=\(endpoint ?? server.endpoint)&region=\(SeaweedServer.region)")
        try await EngineHarness.run { harness in
            let client = harness.engine.objectStoreClient(location: location, credentials: credentials)
            do {
                try await body(client, harness)
            } catch {
                await client.stop()
                throw error
            }
            await client.stop()
        }
    }

    /// The error `body` threw, nil when it succeeded.
    private func failure<T>(_ body: () async throws(ObjectStoreError) -> T) async -> ObjectStoreError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }

    /// `path` open for reading; closed by the caller.
    private func openForReading(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", path) }
        return fd
    }

    @Test func multipartRoundTripIsByteIdenticalAndServesRanges() async throws {
        try await withClient { client, harness in
            let sizes = [5 * Self.mebibyte, 5 * Self.mebibyte, 3 * Self.mebibyte / 2]
            let total = sizes.reduce(0, +)
            let path = harness.root + "/source.bin"
            try Fixture.writeFile(at: path, size: total, seed: 12)
            let sha256 = try Fixture.sha256Hex(ofFile: path)
            let fd = try openForReading(path)
            defer { close(fd) }
            let key = client.location.key(jobID: "job-1", filename: "big file é.bin")

            let uploadID = try await client.createMultipartUpload(key: key, contentType: "application/octet-stream",
                                                                  metadata: ["sha256": sha256, "job-id": "job-1"])
            var parts: [UploadedPart] = []
            var offset: Int64 = 0
            for (index, size) in sizes.enumerated() {
                let part = try await client.uploadPart(key: key, uploadID: uploadID, partNumber: index + 1, descriptor: fd,
                                                       offset: offset, length: Int64(size))
                #expect(part.number == index + 1 && part.size == Int64(size) && !part.etag.isEmpty)
                parts.append(part)
                offset += Int64(size)
            }
            let etag = try await client.completeMultipartUpload(key: key, uploadID: uploadID, parts: parts)
            #expect(!etag.isEmpty)

            let info = try await client.headObject(key: key)
            #expect(info.size == Int64(total))
            #expect(info.metadata["sha256"] == sha256)
            #expect(info.metadata["job-id"] == "job-1")

            let whole = ByteCollector()
            let got = try await client.getObject(key: key, sink: whole.append)
            #expect(got.size == Int64(total))
            #expect(whole.collected.count == total)
            #expect(Fixture.sha256Hex(of: whole.collected) == sha256)

            // A range across the first part boundary: the bytes of the file at those offsets, the size the whole.
            let start = Int64(5 * Self.mebibyte - 1000)
            let slice = ByteCollector()
            let ranged = try await client.getObject(key: key, range: start...(start + 1999), sink: slice.append)
            #expect(ranged.size == Int64(total))
            let expected = Array(Fixture.content(size: total, seed: 12)[Int(start)..<Int(start + 2000)])
            #expect(slice.collected == expected)
        }
    }

    @Test func listsThePartsOfAnUnfinishedUploadThenAbortRemovesIt() async throws {
        try await withClient { client, harness in
            let path = harness.root + "/partial.bin"
            try Fixture.writeFile(at: path, size: 6 * Self.mebibyte, seed: 3)
            let fd = try openForReading(path)
            defer { close(fd) }
            let key = client.location.key(jobID: "job-2", filename: "partial.bin")
            let uploadID = try await client.createMultipartUpload(key: key)
            #expect(try await client.listParts(key: key, uploadID: uploadID).isEmpty)
            let first = try await client.uploadPart(key: key, uploadID: uploadID, partNumber: 1, descriptor: fd,
                                                    offset: 0, length: Int64(5 * Self.mebibyte))
            let second = try await client.uploadPart(key: key, uploadID: uploadID, partNumber: 2, descriptor: fd,
                                                     offset: Int64(5 * Self.mebibyte), length: Int64(Self.mebibyte))
            // What another node would continue from: the same numbers, sizes and ETags.
            let listed = try await client.listParts(key: key, uploadID: uploadID)
            #expect(listed == [first, second])

            try await client.abortMultipartUpload(key: key, uploadID: uploadID)
            let gone = try #require(await failure { () async throws(ObjectStoreError) in try await client.listParts(key: key, uploadID: uploadID) }, "an aborted upload still lists parts")
            #expect(gone.kind == .notFound && gone.code == "NoSuchUpload", "\(gone)")
            let missing = try #require(await failure { () async throws(ObjectStoreError) in try await client.headObject(key: key) }, "an aborted upload left an object")
            #expect(missing.kind == .notFound && missing.status == 404, "\(missing)")
        }
    }

    @Test func putHeadAndDeleteAnObject() async throws {
        try await withClient { client, _ in
            let key = client.location.key(jobID: "job-3", filename: "a+b ü~(1).txt")
            let bytes = Array("hello, object store\n".utf8)
            let etag = try await client.putObject(key: key, bytes: bytes, contentType: "text/plain", metadata: ["sha256": Fixture.sha256Hex(of: bytes)])
            #expect(!etag.isEmpty)
            let info = try await client.headObject(key: key)
            #expect(info.size == Int64(bytes.count))
            #expect(info.etag == etag)
            #expect(info.contentType == "text/plain")
            #expect(info.metadata == ["sha256": Fixture.sha256Hex(of: bytes)])

            try await client.deleteObject(key: key)
            let error = try #require(await failure { () async throws(ObjectStoreError) in try await client.headObject(key: key) }, "the object survived its deletion")
            #expect(error.kind == .notFound && error.operation == .headObject, "\(error)")
            let unserved = try #require(await failure { () async throws(ObjectStoreError) in try await client.getObject(key: key) { _ in .consumed } }, "a deleted object was served")
            #expect(unserved.kind == .notFound && unserved.code == "NoSuchKey", "\(unserved)")
        }
    }

    @Test func aSinkRunsOnTheEngineQueueAndMayStopTheObject() async throws {
        try await withClient { client, harness in
            let key = client.location.key(jobID: "job-4", filename: "stopped.bin")
            let bytes = Fixture.content(size: 3 * Self.mebibyte, seed: 4)
            _ = try await client.putObject(key: key, bytes: bytes)
            let engineQueue = DispatchSpecificKey<Bool>()
            harness.engine.queue.setSpecific(key: engineQueue, value: true)
            let calls = ByteCollector()
            let stopped = try #require(await failure { () async throws(ObjectStoreError) in
                try await client.getObject(key: key) { _ in
                    let onEngineQueue: [UInt8] = [DispatchQueue.getSpecific(key: engineQueue) == true ? 1 : 0]
                    _ = onEngineQueue.withUnsafeBytes { calls.append($0) }
                    return .stop
                }
            }, "a sink refusing bytes did not stop the object")
            #expect(stopped.kind == .stopped && stopped.operation == .getObject, "\(stopped)")
            #expect(calls.collected == [1], "the sink ran once, on the engine queue")
            // The client and the connection cache are still usable.
            #expect(try await client.headObject(key: key).size == Int64(bytes.count))
        }
    }

    @Test func aPausedReaderHoldsTheObjectBackUntilItResumes() async throws {
        try await withClient { client, _ in
            let key = client.location.key(jobID: "job-5", filename: "paced.bin")
            let bytes = Fixture.content(size: 2 * Self.mebibyte, seed: 5)
            _ = try await client.putObject(key: key, bytes: bytes)
            let reading = ObjectReading()
            let received = ByteCollector()
            let pauses = ByteCollector()
            // Every fourth offer is refused once; another thread resumes 20 ms later.
            let info = try await client.getObject(key: key, reading: reading) { chunk in
                let offers = pauses.collected.count
                _ = [UInt8(1)].withUnsafeBytes { pauses.append($0) }
                if offers % 4 == 3 {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(20)) { reading.resume() }
                    return .pause
                }
                return received.append(chunk)
            }
            #expect(info.size == Int64(bytes.count))
            #expect(received.collected == bytes, "paused chunks were lost or doubled")
            #expect(pauses.collected.count >= 4, "the object came in fewer chunks than the test needs")
            reading.resume()  // after the end: nothing to resume, nothing happens
        }
    }

    @Test func aStoppedClientRefusesNewRequests() async throws {
        try await withClient { client, _ in
            try await client.checkBucket()
            await client.stop()
            let refused = try #require(await failure { () async throws(ObjectStoreError) in try await client.checkBucket() },
                                       "a stopped client sent a request")
            #expect(refused.kind == .stopped && !refused.isRetryable, "\(refused)")
        }
    }

    @Test func checkBucketPassesForAnExistingBucketAndNamesAMissingOne() async throws {
        try await withClient { client, _ in
            try await client.checkBucket()
        }
        try await withClient(bucket: "ferry-no-such-bucket") { client, _ in
            let error = try #require(await failure { () async throws(ObjectStoreError) in try await client.checkBucket() }, "a missing bucket passed the check")
            #expect(error.kind == .notFound && error.code == "NoSuchBucket", "\(error)")
            #expect(error.description.contains("/ferry-no-such-bucket"))
        }
    }

    @Test(arguments: [
        ("NOSUCHACCESSKEY", SeaweedServer.secretKey, "InvalidAccessKeyId"),
        (SeaweedServer.accessKey, "wrong-secret", "SignatureDoesNotMatch"),
    ])
    func wrongCredentialsFailAtOnceWithTheirOwnError(accessKey: String, secret: String, code: String) async throws {
        let bucket = try await SeaweedServer.shared().createBucket()
        try await withClient(bucket: bucket, credentials: .init(accessKeyID: accessKey, secretAccessKey: secret)) { client, _ in
            let started = Date()
            let error = try #require(await failure { () async throws(ObjectStoreError) in try await client.checkBucket() }, "wrong credentials were accepted")
            #expect(error.kind == .credentialsRejected && error.code == code && error.status == 403, "\(error)")
            #expect(!error.isRetryable)
            #expect(error.description.contains("credentials rejected"))
            let refused = try #require(await failure { () async throws(ObjectStoreError) in try await client.putObject(key: "k", bytes: [1, 2, 3]) }, "wrong credentials stored an object")
            #expect(refused.kind == .credentialsRejected && refused.operation == .putObject, "\(refused)")
            #expect(Date().timeIntervalSince(started) < 5, "two refused requests took more than 5 s")
        }
    }

    @Test func anEndpointNobodyListensOnIsNamed() async throws {
        let port = try LoopbackSocket.freePort()
        try await withClient(bucket: "files", endpoint: "http://127.0.0.1:\(port)") { client, _ in
            let error = try #require(await failure { () async throws(ObjectStoreError) in try await client.checkBucket() }, "a closed port answered")
            #expect(error.kind == .unreachable && error.status == nil, "\(error)")
            #expect(error.isRetryable)
            #expect(error.description.hasPrefix("object store http://127.0.0.1:\(port)/files: ListObjectsV2 unreachable: "))
            #expect(error.description.contains("curl error 7"))
        }
    }
}
