import FerryEngine
import FerryTestSupport
import Foundation
import Logging
import Testing

/// `--object-store` (issue 12, point 4) against a real SeaweedFS S3 gateway on 127.0.0.1: a finished job becomes
/// an object with its SHA-256 as metadata, the content endpoint serves it from the object store (the local copy
/// removed first, so the spool cannot answer) with the same ranges and validators as from the spool, DELETE
/// removes the object, `/readyz` checks the bucket and `/metrics` counts the store's requests, and a start with a wrong key, a missing bucket or an unreachable store is a one-line error
/// and a non-zero exit.
@Suite("Object store, end to end", .serialized, .enabled(if: !SeaweedServer.isSkipped))
struct ObjectStoreTests {
    static let logger = Logger(label: "ferry-test-object-store")

    /// The test process's keys are the test store's (set once; every object-store test uses the same pair).
    static let keysSet: Void = {
        setenv("AWS_ACCESS_KEY_ID", SeaweedServer.accessKey, 1)
        setenv("AWS_SECRET_ACCESS_KEY", SeaweedServer.secretKey, 1)
    }()

    static func location(_ server: SeaweedServer, bucket: String) -> String {
        "s3://\(bucket)/jobs?endpoint=\(server.endpoint)&region=\(SeaweedServer.region)"
    }

    /// A client of its own (on an engine of its own) to look at the bucket from outside Ferry.
    static func withInspector(_ location: String, _ body: (ObjectStoreClient) async throws -> Void) async throws {
        let directory = try Fixture.tempDirectory("ferry-object-inspector")
        defer { Fixture.removeTree(directory) }
        let engine = DownloadEngine(configuration: EngineConfiguration(), spool: try Spool(root: directory), logger: logger) { _ in }
        let client = engine.objectStoreClient(location: try ObjectStoreLocation(parsing: location),
                                              credentials: .init(accessKeyID: SeaweedServer.accessKey, secretAccessKey: SeaweedServer.secretKey))
        do { try await body(client) } catch {
            await client.stop()
            await engine.shutdown()
            throw error
        }
        await client.stop()
        await engine.shutdown()
    }

    @Test func aFinishedJobIsAnObjectServedWithRangesAndValidatorsAndDeletedWithTheJob() async throws {
        Self.keysSet
        let server = try await SeaweedServer.shared()
        let location = await Self.location(server, bucket: try server.createBucket())
        try await withNginx { nginx in
            // Two parts of the default 16 MiB: a multipart upload with a short last part.
            let size = 21 * 1024 * 1024 + 17
            try Fixture.writeFile(at: nginx.root + "/stored.bin", size: size, seed: 12)
            let bytes = Fixture.content(size: size, seed: 12)
            let expected = Fixture.sha256Hex(of: bytes)
            try await withFerry({ $0.objectStore = location }) { ferry in
                let client = ferry.client
                let created = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/stored.bin")])
                let id = try #require(try created.json()["id"] as? String)
                let finished = try await client.waitForJob(id, timeout: 60) { ["finished", "failed"].contains($0["state"] as? String) }
                #expect(finished["state"] as? String == "finished", "\(finished)")
                #expect(finished["sha256"] as? String == expected)

                let key = try ObjectStoreLocation(parsing: location).key(jobID: id, filename: "stored.bin")
                try await Self.withInspector(location) { inspector in
                    let info = try await inspector.headObject(key: key)
                    #expect(info.size == Int64(size))
                    #expect(info.metadata["sha256"] == expected)
                }
                // The spool's copy gone: what follows can only come from the object store.
                try FileManager.default.removeItem(atPath: ferry.spool + "/files/stored.bin")

                let whole = try await client.get("/api/v1/jobs/\(id)/content")
                #expect(whole.status == 200)
                #expect(whole.body.count == size)
                #expect(Fixture.sha256Hex(of: whole.body) == expected)
                let etag = try #require(whole.header("ETag"))
                #expect(whole.header("Accept-Ranges") == "bytes")
                #expect(whole.header("Content-Disposition")?.contains("stored.bin") == true)
                #expect(whole.header("Repr-Digest")?.hasPrefix("sha-256=:") == true)

                let head = try await client.request("HEAD", "/api/v1/jobs/\(id)/content")
                #expect(head.status == 200 && head.body.isEmpty)
                #expect(head.header("Content-Length") == String(size))

                let range = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=100-199"])
                #expect(range.status == 206)
                #expect(range.header("Content-Range") == "bytes 100-199/\(size)")
                #expect(range.body == Array(bytes[100...199]))
                let suffix = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=-10"])
                #expect(suffix.status == 206 && suffix.body == Array(bytes[(size - 10)...]))
                let multi = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=0-9,6000000-6000009"])
                #expect(multi.status == 206)
                #expect(multi.header("Content-Type")?.hasPrefix("multipart/byteranges") == true)
                #expect(multi.text.contains("Content-Range: bytes 0-9/\(size)"))
                #expect(multi.text.contains("Content-Range: bytes 6000000-6000009/\(size)"))
                #expect(Self.contains(multi.body, Array(bytes[6_000_000...6_000_009])))
                let outside = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=\(size + 10)-"])
                #expect(outside.status == 416)
                #expect(outside.header("Content-Range") == "bytes */\(size)")
                let notModified = try await client.get("/api/v1/jobs/\(id)/content", headers: ["If-None-Match": etag])
                #expect(notModified.status == 304 && notModified.body.isEmpty)
                let staleIfRange = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=0-9", "If-Range": "\"not-it\""])
                #expect(staleIfRange.status == 200 && staleIfRange.body.count == size)
                let freshIfRange = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=0-9", "If-Range": etag])
                #expect(freshIfRange.status == 206 && freshIfRange.body == Array(bytes[0...9]))

                let ready = try await client.get("/readyz")
                #expect(ready.status == 200, "\(ready.text)")
                let metrics = try await client.get("/metrics").text
                #expect(metrics.contains("ferry_object_store_requests_total{operation=\"UploadPart\"} 2"), "\(metrics)")
                #expect(metrics.contains("ferry_object_store_requests_total{operation=\"GetObject\"}"))

                let deleted = try await client.request("DELETE", "/api/v1/jobs/\(id)")
                #expect(deleted.status == 204)
                try await Self.withInspector(location) { inspector in
                    var gone = false
                    for _ in 0..<50 where !gone {
                        do throws(ObjectStoreError) { _ = try await inspector.headObject(key: key) } catch { gone = error.kind == .notFound }
                        if !gone { try await Task.sleep(nanoseconds: 100_000_000) }
                    }
                    #expect(gone, "the object outlived its job")
                }
            }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    /// `ferry serve --object-store` as a process with `keys`; what it wrote to stderr and its exit status.
    static func start(objectStore: String, keys: (String, String)) async throws -> (status: Int32?, log: String) {
        let spool = try Fixture.tempDirectory("ferry-object-start")
        defer { Fixture.removeTree(spool) }
        let process = try ChildProcess.launch(
            try ferryExecutable(),
            ["serve", "--host", "127.0.0.1", "--port", "0", "--spool", spool, "--min-free-space", "0", "--object-store", objectStore],
            environment: ["PATH": "/usr/bin:/bin", "AWS_ACCESS_KEY_ID": keys.0, "AWS_SECRET_ACCESS_KEY": keys.1])
        let status = await process.exit(within: 40)
        if status == nil { _ = await process.stopped(grace: 1) }
        return (status, process.standardError())
    }

    @Test func aWrongKeyAMissingBucketOrAnUnreachableStoreStopTheStartInOneLine() async throws {
        let server = try await SeaweedServer.shared()
        let bucket = try await server.createBucket()
        let keys = (SeaweedServer.accessKey, SeaweedServer.secretKey)

        let wrongKey = try await Self.start(objectStore: Self.location(server, bucket: bucket), keys: (SeaweedServer.accessKey, "not-the-secret"))
        #expect(wrongKey.status != nil && wrongKey.status != 0)
        #expect(wrongKey.log.contains("the credentials were refused"), "\(wrongKey.log)")
        #expect(wrongKey.log.contains("s3://\(bucket)/jobs"), "\(wrongKey.log)")
        #expect(!wrongKey.log.contains("not-the-secret"))

        let missing = try await Self.start(objectStore: Self.location(server, bucket: "no-such-bucket-here"), keys: keys)
        #expect(missing.status != nil && missing.status != 0)
        #expect(missing.log.contains("the bucket does not exist"), "\(missing.log)")

        let port = try RestartTests.freePort()
        let unreachable = try await Self.start(objectStore: "s3://\(bucket)?endpoint=http://127.0.0.1:\(port)&region=us-east-1", keys: keys)
        #expect(unreachable.status != nil && unreachable.status != 0)
        #expect(unreachable.log.contains("the store is unreachable"), "\(unreachable.log)")
        #expect(unreachable.log.contains("127.0.0.1:\(port)"), "\(unreachable.log)")
        for log in [wrongKey.log, missing.log, unreachable.log] {
            let errorLines = log.split(separator: "\n").filter { $0.contains("object store") }
            #expect(errorLines.count == 1, "\(log)")
        }
    }
}
