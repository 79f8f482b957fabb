import FerryService
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// Several Ferry nodes in this process on one test PostgreSQL database, each with its own spool (the test-only
/// `allowsNodesWithoutObjectStore`), and one nginx origin: claims, forwarded actions, handovers and the
/// cluster-wide event ids. Left out with `FERRY_SKIP_POSTGRES=1`.
@Suite("Several nodes on one PostgreSQL store", .enabled(if: !PostgresServer.isSkipped), .serialized)
struct ClusterNodesTests {
    /// Starts `count` nodes named node-0… on a fresh database, runs `body`, stops them and drops the database.
    func withNodes(_ count: Int, maxConcurrent: Int = 2, lease: Duration = .seconds(3), token: String? = nil,
                   _ body: ([RunningFerry], PostgresLocation) async throws -> Void) async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        defer { server.dropDatabase(database) }
        let location = try #require(PostgresLocation(server.url(database: database)))
        var nodes: [RunningFerry] = []
        do {
            for index in 0..<count {
                nodes.append(try await RunningFerry.start(token: token) { configuration in
                    configuration.store = .postgres(location)
                    configuration.nodeID = "node-\(index)"
                    configuration.lease = lease
                    configuration.maxConcurrent = maxConcurrent
                    configuration.allowsNodesWithoutObjectStore = true
                })
            }
            try await body(nodes, location)
        } catch {
            for node in nodes { await node.stop() }
            throw error
        }
        for node in nodes { await node.stop() }
    }

    /// The node ids holding leases, by node index, from `/metrics`.
    static func leases(_ node: RunningFerry) async throws -> Int {
        let text = String(decoding: try await node.client.get("/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("ferry_node_leases ") }
        return line.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
    }

    /// Polls `condition` every 50 ms until it holds or `timeout` seconds pass.
    static func eventually(timeout: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try await condition() { return true }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        return try await condition()
    }

    @Test func jobsSubmittedRoundRobinFinishOnceAndEventIDsHoldAcrossNodes() async throws {
        // No handover is tested here: a lease long enough that a loaded machine (three in-process nodes beside a full
        // parallel run, load 10 on 2 cores) does not fence a node, whose job another then fetches again.
        try await withNodes(3, lease: .seconds(12)) { nodes, _ in
            try await withNginx { nginx in
                let count = 12
                var digests: [String: String] = [:]
                for index in 0..<count {
                    try Fixture.writeFile(at: nginx.root + "/f\(index).bin", size: 65_536 + index, seed: 100 + index)
                    digests["/f\(index).bin"] = Fixture.sha256Hex(of: Fixture.content(size: 65_536 + index, seed: 100 + index))
                }
                // A reference stream on node 2 from the start, and a client that will switch from node 0 to node 1.
                let mark = try #require(try await nodes[0].client.get("/api/v1/jobs").header("Ferry-Event-Id"))
                let reference = try await nodes[2].client.events("/api/v1/events", headers: ["Last-Event-ID": mark])
                let first = try await nodes[0].client.events("/api/v1/events", headers: ["Last-Event-ID": mark])

                var ids: [String: String] = [:]
                for index in 0..<count {
                    let node = nodes[index % nodes.count]
                    let created = try await node.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/f\(index).bin")])
                    #expect(created.status == 201)
                    ids[try #require(try created.json()["id"] as? String)] = "/f\(index).bin"
                }
                for (id, path) in ids {
                    let finished = try await nodes[(id.hashValue & 0xff) % nodes.count].client.waitForJob(id) {
                        $0["state"] as? String == "finished"
                    }
                    #expect(finished["sha256"] as? String == digests[path], "\(path)")
                }
                // Every file was fetched once: no job ran on two nodes.
                let log = await nginx.accessLog(count: count)
                for path in digests.keys {
                    #expect(log.filter { $0.path == path && $0.method == "GET" }.count == 1, "\(path): \(log.filter { $0.path == path })")
                }

                func finishedAll(_ events: [SSEvent]) -> Bool {
                    Set(events.filter { $0.event == "job" && $0.data.contains(#""state":"finished""#) }
                        .compactMap { try? $0.json()["id"] as? String }).count == count
                }
                var all: [SSEvent] = []
                let expected = try await reference.collect { event in all.append(event); return finishedAll(all) }
                // The switching client reads half of what the reference saw on node 0, then resumes on node 1.
                let jobEvents = expected.filter { $0.event == "job" }
                let half = jobEvents.count / 2
                var seen = try await first.collect { $0.event == "job" && $0.id == jobEvents[half - 1].id }
                let lastID = try #require(seen.last?.id)
                let second = try await nodes[1].client.events("/api/v1/events", headers: ["Last-Event-ID": lastID])
                var rest: [SSEvent] = []
                rest = try await second.collect { event in rest.append(event); return event.id == jobEvents.last?.id }
                seen += rest
                let seenJobs = seen.filter { $0.event == "job" }
                #expect(seenJobs.map(\.id) == jobEvents.map(\.id), "every job event once, in order")
                let numbers = seen.compactMap { $0.id.flatMap { Int64($0) } }
                #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "ids increase: \(numbers)")
            }
        }
    }

    @Test func pauseResumeAndCancelMadeOnAnotherNodeReachTheOwner() async throws {
        try await withNodes(2) { nodes, _ in
            try await withNginx { nginx in
                try Fixture.writeFile(at: nginx.root + "/slow.bin", size: 4_000_000, seed: 7)
                let created = try await nodes[0].client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/slow.bin?rate=100000")])
                let id = try #require(try created.json()["id"] as? String)
                try await nodes[1].client.waitForJob(id) { $0["state"] as? String == "downloading" }
                let owner = try await Self.leases(nodes[0]) == 1 ? 0 : 1
                #expect(try await Self.leases(nodes[owner]) == 1)
                let other = nodes[1 - owner]
                #expect(try await Self.eventually(timeout: 3) {
                    try await other.client.get("/api/v1/jobs/\(id)").json()["node"] as? String == "node-\(owner)"
                }, "the other node shows which node runs the job")

                let started = Date()
                let paused = try await other.client.request("POST", "/api/v1/jobs/\(id)/pause")
                #expect(paused.status == 200)
                #expect(try paused.json()["state"] as? String == "paused")
                #expect(Date().timeIntervalSince(started) < 1.5, "forwarded pause took \(Date().timeIntervalSince(started)) s")
                try await nodes[owner].client.waitForJob(id, timeout: 2) { $0["state"] as? String == "paused" }
                #expect(try await Self.leases(nodes[owner]) == 0)
                #expect(try await other.client.get("/api/v1/jobs/\(id)").json()["node"] is NSNull)

                // Unowned now: resumed on the other node, which runs it.
                let resumed = try await other.client.request("POST", "/api/v1/jobs/\(id)/resume")
                #expect(resumed.status == 200)
                try await other.client.waitForJob(id) { $0["state"] as? String == "downloading" }
                #expect(try await Self.leases(other) == 1)

                let cancelled = try await nodes[owner].client.request("POST", "/api/v1/jobs/\(id)/cancel")
                #expect(cancelled.status == 200)
                #expect(try cancelled.json()["state"] as? String == "cancelled")
                try await other.client.waitForJob(id, timeout: 2) { $0["state"] as? String == "cancelled" }
            }
        }
    }

    /// A resume made on another node right after the owner paused the job (before that node heard of the pause) is
    /// judged on the job as stored, not on the other node's view: it resumes the job, never answers it as a no-op and
    /// leaves it paused (seen once in 13 runs of the cluster suite's pause-and-move phase).
    @Test func aResumeRightAfterAPauseOnTheOwnerResumes() async throws {
        try await withNodes(2) { nodes, _ in
            try await withNginx { nginx in
                let (id, _, _) = try await Self.slowJob(nodes, nginx)
                for round in 1...5 {
                    // Where it runs now (the node that resumed it took it, or its previous owner did: a resume sent
                    // before the pause's release reached the store is forwarded there).
                    var runner: RunningFerry?
                    _ = try await Self.eventually(timeout: 5) {
                        for node in nodes where try await Self.leases(node) == 1 { runner = node }
                        return runner != nil
                    }
                    let owner = try #require(runner, "round \(round): no node runs the job")
                    let asker = owner === nodes[0] ? nodes[1] : nodes[0]
                    try await owner.client.waitForJob(id, timeout: 5) { $0["state"] as? String == "downloading" }
                    let paused = try await owner.client.request("POST", "/api/v1/jobs/\(id)/pause")
                    let pausedState = try paused.json()["state"] as? String
                    #expect(paused.status == 200 && pausedState == "paused", "round \(round): \(paused.status) \(pausedState ?? "-")")
                    let resumed = try await asker.client.request("POST", "/api/v1/jobs/\(id)/resume")
                    #expect(resumed.status == 200, "round \(round)")
                    // Resumed for good: some node takes it and downloads (a resume answered as a no-op took nothing,
                    // and the job stayed paused).
                    #expect(try await Self.eventually(timeout: 5) {
                        var leases = 0
                        for node in nodes { leases += try await Self.leases(node) }
                        return leases == 1
                    }, "round \(round): no node took the job after the resume")
                }
            }
        }
    }

    /// Starts a slow download on one of two nodes; returns its id, the node running it and the other one.
    static func slowJob(_ nodes: [RunningFerry], _ nginx: NginxOrigin, rate: Int = 100_000) async throws
        -> (id: String, owner: RunningFerry, other: RunningFerry)
    {
        try Fixture.writeFile(at: nginx.root + "/slow.bin", size: 4_000_000, seed: 7)
        let created = try await nodes[0].client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/slow.bin?rate=\(rate)")])
        let id = try #require(try created.json()["id"] as? String)
        try await nodes[1].client.waitForJob(id) { $0["state"] as? String == "downloading" }
        let owner = try await Self.leases(nodes[0]) == 1 ? 0 : 1
        #expect(try await Self.leases(nodes[owner]) == 1)
        return (id, nodes[owner], nodes[1 - owner])
    }

    @Test func aPatchMadeOnAnotherNodeReachesTheOwnerAndTakesEffectThere() async throws {
        try await withNodes(2) { nodes, _ in
            try await withNginx { nginx in
                let (id, owner, other) = try await Self.slowJob(nodes, nginx)
                // Refused on the asking node, as on a single node: nothing reaches the owner.
                let invalid = try await other.client.json("PATCH", "/api/v1/jobs/\(id)", ["maxBytesPerSecond": 0])
                #expect(invalid.status == 400)
                #expect(try (invalid.json()["error"] as? [String: Any])?["code"] as? String == "invalid_request")
                let badURL = try await other.client.json("PATCH", "/api/v1/jobs/\(id)", ["url": "gopher://x/y"])
                #expect(badURL.status == 400)

                let started = Date()
                let patched = try await other.client.json("PATCH", "/api/v1/jobs/\(id)",
                                                          ["maxBytesPerSecond": 20_000, "priority": 7, "tags": ["moved"]])
                let took = Date().timeIntervalSince(started)
                #expect(patched.status == 200, "\(String(decoding: patched.body, as: UTF8.self))")
                let answer = try patched.json()
                #expect(answer["maxBytesPerSecond"] as? Int == 20_000 && answer["priority"] as? Int == 7)
                #expect(answer["tags"] as? [String] == ["moved"])
                #expect(answer["state"] as? String == "downloading")
                #expect(took < 1, "forwarded PATCH took \(took) s")
                let seen = try await owner.client.get("/api/v1/jobs/\(id)").json()
                #expect(seen["maxBytesPerSecond"] as? Int == 20_000 && seen["priority"] as? Int == 7, "\(seen)")
                #expect(try await Self.leases(owner) == 1, "still running on its owner")

                // In force there: at most about 20 kB/s over 3 s (the origin sends 100 kB/s).
                try await Task.sleep(for: .seconds(1))
                let before = try await owner.client.get("/api/v1/jobs/\(id)").json()["bytesReceived"] as? Int ?? 0
                try await Task.sleep(for: .seconds(3))
                let after = try await owner.client.get("/api/v1/jobs/\(id)").json()["bytesReceived"] as? Int ?? 0
                #expect(after - before < 3 * 20_000 * 2, "\(after - before) bytes in 3 s under a 20 kB/s limit")

                // A conflict is answered on the asking node too.
                _ = try await other.client.request("POST", "/api/v1/jobs/\(id)/cancel")
                let conflict = try await other.client.json("PATCH", "/api/v1/jobs/\(id)", ["priority": 1])
                #expect(conflict.status == 409)
            }
        }
    }

    @Test func progressOfAJobRunningOnAnotherNodeReachesThisNodesStream() async throws {
        try await withNodes(2) { nodes, _ in
            try await withNginx { nginx in
                let mark = try #require(try await nodes[1].client.get("/api/v1/jobs").header("Ferry-Event-Id"))
                let (id, owner, other) = try await Self.slowJob(nodes, nginx)
                let stream = try await other.client.events("/api/v1/events?interval=100", headers: ["Last-Event-ID": mark])
                var seen: [SSEvent] = []
                _ = try await stream.collect(timeout: 15) { event in
                    seen.append(event)
                    return seen.filter { $0.event == "progress" }.count >= 3
                }
                // The table here follows too: bytes and speed of the job running on the owner.
                let listed = try await other.client.get("/api/v1/jobs/\(id)").json()
                #expect((listed["bytesReceived"] as? Int ?? 0) > 0 && (listed["speed"] as? Double ?? 0) > 0, "\(listed)")

                let paused = try await other.client.request("POST", "/api/v1/jobs/\(id)/pause")
                #expect(paused.status == 200)
                let rest = try await stream.collect(timeout: 10) { event in
                    event.event == "job" && event.data.contains(#""state":"paused""#)
                }
                seen += rest
                let numbers = seen.compactMap { $0.id.flatMap { Int64($0) } }
                #expect(numbers.count == seen.count && numbers == numbers.sorted() && Set(numbers).count == numbers.count,
                        "ids increase: \(numbers)")
                let mine = seen.filter { (try? $0.json()["id"] as? String) == id }
                let progress = mine.filter { $0.event == "progress" }
                let bytes = progress.compactMap { try? $0.json()["bytesReceived"] as? Int }
                #expect(bytes.count >= 3 && bytes == bytes.sorted() && bytes.last! > bytes.first!, "\(bytes)")
                // Progress comes after the job event that says it is downloading, and none after it paused.
                let downloading = try #require(mine.firstIndex { $0.event == "job" && $0.data.contains(#""state":"downloading""#) })
                #expect(mine.firstIndex { $0.event == "progress" }! > downloading)
                #expect(mine.last?.event == "job")
                #expect(try await owner.client.get("/api/v1/jobs/\(id)").json()["state"] as? String == "paused")
            }
        }
    }

    @Test func aPageSessionMadeOnOneNodeWorksOnEveryNodeUntilLoggedOut() async throws {
        try await withNodes(2, token: "cluster-token") { nodes, location in
            // The secrets every node must share are the store's, one each.
            let store = try await PostgresJobStore(location: location)
            let webhookSecret = try await store.value(forKey: "webhook-secret")
            let sessionSecret = try await store.value(forKey: "session-secret")
            await store.close()
            #expect(webhookSecret?.hasPrefix("whsec_") == true && (sessionSecret?.count ?? 0) >= 32)
            let first = TestClient(port: nodes[0].port)
            let second = TestClient(port: nodes[1].port)
            let login = try await first.json("POST", "/api/v1/session", ["token": "cluster-token"])
            let cookie = String(try #require(login.header("Set-Cookie")).split(separator: ";")[0])
            #expect(try await second.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 200)
            let logout = try await first.request("DELETE", "/api/v1/session", headers: ["Cookie": cookie, "X-Requested-With": "ferry"])
            #expect(logout.status == 204)
            #expect(try await Self.eventually(timeout: 1) {
                try await second.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 401
            }, "the logout made on node-0 holds on node-1")
            #expect(try await first.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 401)
        }
    }

    @Test func aNodeStoppedGracefullyHandsItsRunningJobOver() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        defer { server.dropDatabase(database) }
        let location = try #require(PostgresLocation(server.url(database: database)))
        func node(_ index: Int) async throws -> RunningFerry {
            try await RunningFerry.start { configuration in
                configuration.store = .postgres(location)
                configuration.nodeID = "node-\(index)"
                configuration.lease = .seconds(3)
                configuration.allowsNodesWithoutObjectStore = true
            }
        }
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/moving.bin", size: 600_000, seed: 9)
            let digest = Fixture.sha256Hex(of: Fixture.content(size: 600_000, seed: 9))
            let first = try await node(0)
            let id: String
            do {
                let created = try await first.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/moving.bin?rate=200000")])
                id = try #require(try created.json()["id"] as? String)
                try await first.client.waitForJob(id) { $0["state"] as? String == "downloading" }
            } catch {
                await first.stop()
                throw error
            }
            let second = try await node(1)
            do {
                #expect(try await Self.leases(second) == 0, "node-0 runs the job")
                await first.stop()
                let stopped = Date()
                #expect(try await Self.eventually(timeout: 5) { try await Self.leases(second) == 1 })
                #expect(Date().timeIntervalSince(stopped) < 3, "taken over at once, not after the lease")
                let finished = try await second.client.waitForJob(id) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == digest)
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }

    @Test func aNodeThatStopsRenewingLosesItsJobWithinTheLease() async throws {
        try await withNodes(1, maxConcurrent: 1, lease: .seconds(3)) { nodes, location in
            try await withNginx { nginx in
                try Fixture.writeFile(at: nginx.root + "/busy.bin", size: 2_000_000, seed: 3)
                try Fixture.writeFile(at: nginx.root + "/lost.bin", size: 100_000, seed: 4)
                let node = nodes[0]
                // node-0's one slot is busy, so the job created next is left to claim.
                let busy = try await node.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/busy.bin?rate=100000")])
                let busyID = try #require(try busy.json()["id"] as? String)
                try await node.client.waitForJob(busyID) { $0["state"] as? String == "downloading" }
                let created = try await node.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/lost.bin")])
                let id = try #require(try created.json()["id"] as? String)

                // A node that claims it and then never renews (as after kill -9), through the store itself.
                let ghost = try await PostgresJobStore(location: location)
                _ = try await ghost.heartbeat(node: "ghost", lease: .seconds(2))
                let claimed = try await ghost.claim(node: "ghost", limit: 1, lease: .seconds(2))
                await ghost.close()
                #expect(claimed.map(\.job.id) == [id])
                let lapsed = Date()
                _ = try await node.client.request("POST", "/api/v1/jobs/\(busyID)/cancel")
                let finished = try await node.client.waitForJob(id, timeout: 15) { $0["state"] as? String == "finished" }
                #expect(finished["state"] as? String == "finished")
                let handover = Date().timeIntervalSince(lapsed)
                #expect(handover < 2 + 3, "handed over after \(handover) s (ghost lease 2 s)")
                let metrics = String(decoding: try await node.client.get("/metrics").body, as: UTF8.self)
                #expect(metrics.contains("ferry_handovers_total 1"), "\(metrics)")
            }
        }
    }

    /// A node killed and started again under the same id, before its lease ran out, runs nothing at start: what the
    /// earlier process owned is given back and claimed afresh, not renewed for ever (found by the cluster suite).
    @Test func aNodeRestartedUnderItsIdGivesBackWhatItsEarlierProcessOwned() async throws {
        try await withNodes(1, maxConcurrent: 1, lease: .seconds(30)) { nodes, location in
            try await withNginx { nginx in
                try Fixture.writeFile(at: nginx.root + "/left.bin", size: 100_000, seed: 5)
                await nodes[0].stop()
                // The earlier process of "node-9": it claimed a job with a long lease and was killed.
                let store = try await PostgresJobStore(location: location)
                _ = try await store.insert([JobRecord(id: "left", url: nginx.url("/left.bin"), dedupeKey: "left", createdAt: Date())])
                _ = try await store.heartbeat(node: "node-9", lease: .seconds(30))
                #expect(try await store.claim(node: "node-9", limit: 1, lease: .seconds(30)).map(\.job.id) == ["left"])
                await store.close()

                let restarted = try await RunningFerry.start { configuration in
                    configuration.store = .postgres(location)
                    configuration.nodeID = "node-9"
                    configuration.lease = .seconds(30)
                    configuration.allowsNodesWithoutObjectStore = true
                }
                do {
                    let finished = try await restarted.client.waitForJob("left", timeout: 15) { $0["state"] as? String == "finished" }
                    #expect(finished["state"] as? String == "finished", "\(finished)")
                } catch {
                    await restarted.stop()
                    throw error
                }
                await restarted.stop()
            }
        }
    }

    @Test func aSecondLiveProcessUnderTheSameNodeIDIsRefused() async throws {
        try await withNodes(1) { nodes, location in
            try await withNginx { nginx in
                try Fixture.writeFile(at: nginx.root + "/slow.bin", size: 4_000_000, seed: 7)
                let created = try await nodes[0].client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/slow.bin?rate=100000")])
                let id = try #require(try created.json()["id"] as? String)
                try await nodes[0].client.waitForJob(id) { $0["state"] as? String == "downloading" }
                do {
                    let twin = try await RunningFerry.start { configuration in
                        configuration.store = .postgres(location)
                        configuration.nodeID = "node-0"
                        configuration.lease = .seconds(3)
                        configuration.allowsNodesWithoutObjectStore = true
                    }
                    await twin.stop()
                    Issue.record("a second process started as node-0")
                } catch {
                    let message = "\(error)"
                    #expect(message.contains("'node-0' is in use") && message.contains("--node-id") && !message.contains("\n"), "\(message)")
                }
                // The first process kept its job.
                #expect(try await Self.leases(nodes[0]) == 1)
                #expect(try await nodes[0].client.get("/api/v1/jobs/\(id)").json()["node"] as? String == "node-0")
            }
        }
    }

    @Test func severalLiveNodesWithoutAnObjectStoreAreRefused() async throws {
        try await withNodes(1) { _, location in
            do {
                let extra = try await RunningFerry.start { configuration in
                    configuration.store = .postgres(location)
                    configuration.nodeID = "extra"
                }
                await extra.stop()
                Issue.record("a second node started without an object store")
            } catch {
                let message = "\(error)"
                #expect(message.contains("--object-store") && message.contains("node-0") && !message.contains("\n"), "\(message)")
            }
        }
    }
}
