import FerryEngine
import FerryService
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// Parts uploaded while a download runs, and a handover continuing from them (issue 12, point 4), with a real
/// PostgreSQL store, SeaweedFS and nginx: node A (the `ferry` binary, so that it can be SIGKILLed) downloads a
/// rate-limited file with 5 MiB parts and is killed once two parts are recorded; node B (in this process) takes the
/// job over after A's lease and fetches from the origin only what follows the stored parts; a file that changed
/// meanwhile makes B start from zero. Left out with `FERRY_SKIP_POSTGRES=1` or without SeaweedFS.
@Suite("Parts stored while downloading, continued by another node", .serialized,
       .enabled(if: !PostgresServer.isSkipped && !SeaweedServer.isSkipped))
struct ClusterPartsTests {
    static let partSize: Int64 = 5 << 20
    static let size = 24 * 1024 * 1024 + 123

    /// Starts node A as a child process; returns it and a client of it.
    static func startBinaryNode(store: String, objectStore: String) throws -> (ChildProcess, TestClient, String) {
        let spool = try Fixture.tempDirectory("ferry-parts-a")
        let port = try LoopbackSocket.freePort()
        var environment = ProcessInfo.processInfo.environment
        environment["FERRY_HOST"] = "127.0.0.1"
        environment["FERRY_PORT"] = String(port)
        environment["FERRY_SPOOL"] = spool
        environment["FERRY_STORE"] = store
        environment["FERRY_OBJECT_STORE"] = objectStore
        environment["FERRY_NODE_ID"] = "node-a"
        environment["FERRY_LEASE"] = "3s"
        environment["FERRY_ALLOW_PRIVATE_NETWORKS"] = "1"
        environment["FERRY_MIN_FREE_SPACE"] = "0"
        environment["FERRY_OBJECT_PART_SIZE"] = String(partSize)
        environment["AWS_ACCESS_KEY_ID"] = SeaweedServer.accessKey
        environment["AWS_SECRET_ACCESS_KEY"] = SeaweedServer.secretKey
        let binary = RunningFerry.repositoryRoot + "/.build/debug/ferry"
        let process = try ChildProcess.launch(binary, ["serve"], environment: environment)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if LoopbackSocket.accepts(port: port) { return (process, TestClient(port: port), spool) }
            Thread.sleep(forTimeInterval: 0.1)
        }
        process.killGroup()
        throw FixtureError.startFailed("ferry node A", detail: process.standardError())
    }

    /// Runs A until two parts of a job on `path` are recorded, kills it, then lets `change` alter the origin and B
    /// take over. Returns what `check` needs: the job id, the parts' bytes when A died, nginx and node B.
    func handover(change: (NginxOrigin) throws -> Void = { _ in },
                  check: (_ id: String, _ storedBytes: Int64, _ nginx: NginxOrigin, _ b: RunningFerry, _ objectStore: String) async throws -> Void)
    async throws {
        ObjectStoreTests.keysSet
        let seaweed = try SeaweedServer.shared()
        let objectStore = ObjectStoreTests.location(seaweed, bucket: try seaweed.createBucket())
        let postgres = try PostgresServer.shared()
        let database = try postgres.createDatabase()
        defer { postgres.dropDatabase(database) }
        let location = try #require(PostgresLocation(postgres.url(database: database)))
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: Self.size, seed: 21)
            let (a, client, spoolA) = try Self.startBinaryNode(store: postgres.url(database: database), objectStore: objectStore)
            defer { Fixture.removeTree(spoolA) }
            let id: String
            var storedBytes: Int64 = 0
            var logOfA = ""
            do {
                let created = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/big.bin?rate=2000000"), "connections": 1])
                id = try #require(try created.json()["id"] as? String, "\(created.status)")
                let store = try PostgresJobStore(location: location)
                // Two parts take about 5 s at this rate (slow enough that A fetches less than a part more before it is
                // killed, even on a loaded machine); the margin is for a machine loaded by the parallel suites.
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    if let text = try await store.objectUpload(jobID: id),
                       let record = try? JSONDecoder().decode(ObjectUploadRecord.self, from: Data(text.utf8)), record.parts.count >= 2 {
                        storedBytes = record.parts.reduce(0) { $0 + $1.size }
                        break
                    }
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                a.killGroup()
                _ = a.waitForExit(timeout: 5)
                logOfA = a.standardError()
                // What A had stored when it died (a third part may have landed meanwhile).
                if let text = try await store.objectUpload(jobID: id),
                   let record = try? JSONDecoder().decode(ObjectUploadRecord.self, from: Data(text.utf8)) {
                    storedBytes = max(storedBytes, record.parts.reduce(0) { $0 + $1.size })
                }
                await store.close()
            } catch {
                a.killGroup()
                throw error
            }
            #expect(storedBytes >= 2 * Self.partSize, "two parts were recorded before the kill; node A's log:\n\(logOfA.suffix(4000))")
            try change(nginx)
            let b = try await RunningFerry.start { configuration in
                configuration.store = .postgres(location)
                configuration.objectStore = objectStore
                configuration.nodeID = "node-b"
                configuration.lease = .seconds(3)
                configuration.objectPartSize = Self.partSize
            }
            do { try await check(id, storedBytes, nginx, b, objectStore) } catch {
                await b.stop()
                throw error
            }
            await b.stop()
        }
    }

    @Test
    func aNodeTakingOverFetchesOnlyWhatFollowsTheStoredParts() async throws {
        let expected = Fixture.sha256Hex(of: Fixture.content(size: Self.size, seed: 21))
        try await handover { id, storedBytes, nginx, b, objectStore in
            let finished = try await b.client.waitForJob(id, timeout: 60) { ["finished", "failed"].contains($0["state"] as? String) }
            #expect(finished["state"] as? String == "finished", "\(finished)")
            #expect(finished["sha256"] as? String == expected)
            let gets = nginx.accessLog().filter { $0.path == "/slow/big.bin" && $0.method == "GET" }
            let resumed = try #require(gets.last)
            let from = try #require(resumed.range.flatMap { Int64($0.dropFirst("bytes=".count).prefix { $0 != "-" }) }, "\(gets)")
            #expect(from >= storedBytes, "B asked from byte \(from), the parts held \(storedBytes)")
            let fetched = gets.reduce(Int64(0)) { $0 + $1.bytesSent }
            #expect(fetched - Int64(Self.size) <= Self.partSize, "fetched \(fetched) bytes for a file of \(Self.size): \(gets)")
            // The object is whole, with its SHA-256, and no record is left.
            let key = try ObjectStoreLocation(parsing: objectStore).key(jobID: id, filename: "big.bin")
            try await ObjectStoreTests.withInspector(objectStore) { inspector in
                let info = try await inspector.headObject(key: key)
                #expect(info.size == Int64(Self.size))
                #expect(info.metadata["sha256"] == expected)
            }
            let content = try await b.client.get("/api/v1/jobs/\(id)/content")
            #expect(Fixture.sha256Hex(of: content.body) == expected)
        }
    }

    @Test func aFileChangedMeanwhileIsFetchedFromZeroNeverSpliced() async throws {
        let changed = Fixture.content(size: Self.size, seed: 22)
        try await handover(change: { nginx in
            // Another version of the file: another modification time and so another ETag.
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: Self.size, seed: 22)
            var times = [timespec(tv_sec: time(nil) + 60, tv_nsec: 0), timespec(tv_sec: time(nil) + 60, tv_nsec: 0)]
            _ = utimensat(AT_FDCWD, nginx.root + "/big.bin", &times, 0)
        }) { id, _, nginx, b, _ in
            let finished = try await b.client.waitForJob(id, timeout: 60) { ["finished", "failed"].contains($0["state"] as? String) }
            #expect(finished["state"] as? String == "finished", "\(finished)")
            #expect(finished["sha256"] as? String == Fixture.sha256Hex(of: changed))
            let gets = nginx.accessLog().filter { $0.path == "/slow/big.bin" && $0.method == "GET" }
            #expect(gets.contains { $0.status == 200 && $0.bytesSent == Int64(Self.size) }, "B fetched the new file whole: \(gets)")
        }
    }
}
