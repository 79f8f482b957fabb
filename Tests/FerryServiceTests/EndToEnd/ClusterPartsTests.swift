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
    static func startBinaryNode(store: String, objectStore: String) async throws -> (ChildProcess, TestClient, String) {
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
        if await pollUntil(timeout: 20, interval: 0.05, { LoopbackSocket.accepts(port: port) ? true : nil }) != nil {
            return (process, TestClient(port: port), spool)
        }
        process.killGroup()
        throw FixtureError.startFailed("ferry node A", detail: process.standardError())
    }

    /// What a handover test is given once B runs: the job, A's record when it died, the origin, B and its logs.
    struct Handover {
        let id: String
        let record: ObjectUploadRecord
        let nginx: NginxOrigin
        let b: RunningFerry
        let logs: LogCapture
        let objectStore: String

        var storedBytes: Int64 { record.parts.reduce(0) { $0 + $1.size } }
    }

    /// Runs A on `file` (`size` bytes of `seed`, served at `rate` bytes per second per connection, over
    /// `connections`) until `ready` holds for its record and the job's bytes received, kills it, then lets `change`
    /// alter the origin and B take over, and runs `check`.
    func handover(file: String = "big.bin", size: Int = Self.size, seed: Int = 21, rate: Int = 4_000_000, connections: Int = 1,
                  ready: @escaping (ObjectUploadRecord, _ received: Int64) -> Bool = { record, _ in record.parts.count >= 2 },
                  change: (NginxOrigin) throws -> Void = { _ in }, check: (Handover) async throws -> Void) async throws {
        ObjectStoreTests.keysSet
        let seaweed = try await SeaweedServer.shared()
        let objectStore = await ObjectStoreTests.location(seaweed, bucket: try seaweed.createBucket())
        let postgres = try await PostgresServer.shared()
        let database = try await postgres.createDatabase()
        defer { postgres.dropDatabase(database) }
        let location = try #require(PostgresLocation(postgres.url(database: database)))
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/" + file, size: size, seed: seed)
            let (a, client, spoolA) = try await Self.startBinaryNode(store: postgres.url(database: database), objectStore: objectStore)
            defer { Fixture.removeTree(spoolA) }
            let id: String
            var recorded: ObjectUploadRecord?
            var seen = "no record"
            do {
                let created = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/\(file)?rate=\(rate)"), "connections": connections])
                id = try #require(try created.json()["id"] as? String, "\(created.status)")
                let store = try await PostgresJobStore(location: location)
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    let received = (try? await client.get("/api/v1/jobs/\(id)").json()["bytesReceived"] as? Int).map(Int64.init) ?? .max
                    if let text = try await store.objectUpload(jobID: id),
                       let record = try? JSONDecoder().decode(ObjectUploadRecord.self, from: Data(text.utf8)) {
                        seen += "; \(Date().timeIntervalSince(deadline) + 60)s parts \(record.parts.map(\.number)), \(received) bytes received"
                        if ready(record, received) {
                            recorded = record
                            break
                        }
                    }
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                a.killGroup()
                _ = await a.exit(within: 5)
                await store.close()
            } catch {
                a.killGroup()
                throw error
            }
            // A's own log says why, when the record never got there (seen once in a full parallel run: no record in 60 s).
            let logA = String(a.standardError().suffix(3000))
            let record = try #require(recorded, "A's record never reached the state wanted before the kill; last: \(seen); A's log ends: \(logA)")
            try change(nginx)
            let logs = LogCapture()
            let b = try await RunningFerry.start(logs: logs) { configuration in
                configuration.store = .postgres(location)
                configuration.objectStore = objectStore
                configuration.nodeID = "node-b"
                configuration.lease = .seconds(3)
                configuration.objectPartSize = Self.partSize
            }
            do { try await check(Handover(id: id, record: record, nginx: nginx, b: b, logs: logs, objectStore: objectStore)) } catch {
                await b.stop()
                throw error
            }
            await b.stop()
        }
    }

    /// A is killed once two parts are recorded and it holds little more than them (so what is lost stays below a
    /// part: at 4 MB/s it ran more than a part ahead of its uploads, one run in three). The origin sends 1 MB/s:
    /// half a part is then 2.5 s, the time A has to store a downloaded part for the moment to come, which a loaded
    /// machine did not always give at 2 MB/s (1.25 s: the record never got there).
    @Test func aNodeTakingOverFetchesOnlyWhatFollowsTheStoredParts() async throws {
        let expected = Fixture.sha256Hex(of: Fixture.content(size: Self.size, seed: 21))
        try await handover(rate: 1_000_000, ready: { record, received in
            record.parts.count >= 2 && received - record.parts.reduce(0) { $0 + $1.size } <= Self.partSize / 2
        }) { h in
            let (id, storedBytes, nginx, b, objectStore) = (h.id, h.storedBytes, h.nginx, h.b, h.objectStore)
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

    /// An origin far faster than the object store (issue 33: a 200 MiB file served at full speed was fetched 365 MiB
    /// beyond its size after two kills): the download keeps pace with its part uploads, so at any moment it holds at
    /// most a part per connection beyond what is stored (`PartLookahead`), and a node killed then costs the one
    /// taking over no more than that.
    @Test func aFastSplitDownloadNeverRunsFarAheadOfItsStoredParts() async throws {
        final class Gap: @unchecked Sendable { var worst: Int64 = 0; var samples = 0 }
        let gap = Gap()
        let size = 64 << 20, connections = 4
        // A part per connection (counting what was received and not yet written, which `bytesReceived` counts too);
        // a part stored whose record is still being saved; what arrives between two looks at the lookahead (each
        // write's end looks), at most the writer's 8 MiB backlog; what each connection's libcurl hands over at once
        // when the hold comes (its 512 KiB receive buffer, as the cluster suite's bound counts it: a full parallel
        // run on a busy machine measured 1.25 MiB over the bound without it). Before the lookahead: parts in flight
        // (2), one waiting and one in progress per connection, plus that backlog.
        let lookahead = Int64(max(connections, 2)) * Self.partSize  // PartLookahead.limit
        let bound = lookahead + Self.partSize + (8 << 20) + Int64(connections) * (512 << 10)
        let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 24))
        try await handover(file: "fast.bin", size: size, seed: 24, rate: 200_000_000, connections: connections, ready: { record, received in
            let stored = record.parts.reduce(Int64(0)) { $0 + $1.size }
            if received != .max {
                gap.worst = max(gap.worst, received - stored)
                gap.samples += 1
            }
            return record.parts.count >= 4
        }) { h in
            #expect(gap.samples > 0)
            #expect(gap.worst <= bound, "the download ran \(gap.worst) bytes ahead of its stored parts (bound \(bound))")
            let finished = try await h.b.client.waitForJob(h.id, timeout: 90) { ["finished", "failed"].contains($0["state"] as? String) }
            #expect(finished["state"] as? String == "finished", "\(finished)")
            #expect(finished["sha256"] as? String == expected)
            let gets = h.nginx.accessLog().filter { $0.path == "/slow/fast.bin" && $0.method == "GET" }
            let fetched = gets.reduce(Int64(0)) { $0 + $1.bytesSent }
            // Beyond what was lost, cut fast requests waste what nginx had put in the socket buffers (the cluster
            // suite's allowance, 16 MiB a run, for each of A's kill, B's splits and B's finish).
            #expect(fetched - Int64(size) <= bound + 3 * (16 << 20), "fetched \(fetched) bytes for a file of \(size)")
        }
    }

    /// A download split over four connections stores each segment's parts as they complete; killed once parts
    /// beyond the prefix are recorded, B restores them (with gaps) into a segmented partial file and fetches only
    /// the gaps, with `If-Range`: at most one part's size fetched twice in all, and the SHA-256 right.
    @Test func aSplitDownloadTakenOverFetchesOnlyItsGaps() async throws {
        let size = 40 << 20
        let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 23))
        try await handover(file: "split.bin", size: size, seed: 23, rate: 300_000, connections: 4, ready: { record, received in
            let numbers = record.parts.map(\.number)
            let stored = record.parts.reduce(Int64(0)) { $0 + $1.size }
            // Parts past a gap are stored, and A holds little more than them (so what is lost stays below a part).
            return numbers.count >= 2 && numbers != Array(1...numbers.count) && received - stored <= Self.partSize / 2
        }) { h in
            #expect(h.record.parts.contains { $0.number > h.record.parts.count }, "parts past a gap were recorded: \(h.record.parts)")
            let finished = try await h.b.client.waitForJob(h.id, timeout: 90) { ["finished", "failed"].contains($0["state"] as? String) }
            #expect(finished["state"] as? String == "finished", "\(finished)")
            #expect(finished["sha256"] as? String == expected)
            let gets = h.nginx.accessLog().filter { $0.path == "/slow/split.bin" && $0.method == "GET" }
            let fetched = gets.reduce(Int64(0)) { $0 + $1.bytesSent }
            #expect(fetched - Int64(size) <= Self.partSize, "fetched \(fetched) bytes for a file of \(size): \(gets)")
            // B restored the stored parts (they go into its upload from the spool: libcurl 7.88 cannot sign a ranged
            // UploadPartCopy the store accepts).
            let logs = h.logs.messages
            #expect(logs.contains { $0.contains("restoring a job's stored parts") }, "\(logs)")
            let key = try ObjectStoreLocation(parsing: h.objectStore).key(jobID: h.id, filename: "split.bin")
            try await ObjectStoreTests.withInspector(h.objectStore) { inspector in
                let info = try await inspector.headObject(key: key)
                #expect(info.size == Int64(size))
                #expect(info.metadata["sha256"] == expected)
            }
            let content = try await h.b.client.get("/api/v1/jobs/\(h.id)/content")
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
        }) { h in
            let (id, nginx, b) = (h.id, h.nginx, h.b)
            let finished = try await b.client.waitForJob(id, timeout: 60) { ["finished", "failed"].contains($0["state"] as? String) }
            #expect(finished["state"] as? String == "finished", "\(finished)")
            #expect(finished["sha256"] as? String == Fixture.sha256Hex(of: changed))
            let gets = nginx.accessLog().filter { $0.path == "/slow/big.bin" && $0.method == "GET" }
            #expect(gets.contains { $0.status == 200 && $0.bytesSent == Int64(Self.size) }, "B fetched the new file whole: \(gets)")
        }
    }
}
