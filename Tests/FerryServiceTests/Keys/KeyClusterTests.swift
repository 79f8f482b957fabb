import FerryTestSupport
import Foundation
import Testing

/// API keys on several nodes sharing one PostgreSQL store: a key made on one node works on another, its streams there
/// carry its jobs' events (the stored events keep their key) and no other key's, and a revocation on one node is
/// refused at once on the other (`ferry_keys`); a key's `maxActiveJobs` counts its jobs on every node, and its
/// `maxBytesPerSecond` is shared between the nodes running them, and its `spoolBytes` counts its files on every node.
@Suite("API keys on several nodes", .enabled(if: !PostgresServer.isSkipped), .serialized)
struct KeyClusterTests {
    @Test func keysAndTheirScopeReachEveryNode() async throws {
        try await ClusterNodesTests().withNodes(2, token: KeyTests.adminToken) { nodes, _ in
            let (id, alice) = try await KeyTests.makeKey(nodes[0], name: "alice")
            let (_, bob) = try await KeyTests.makeKey(nodes[0], name: "bob")
            let aliceThere = TestClient(port: nodes[1].port, token: alice.token)
            let bobThere = TestClient(port: nodes[1].port, token: bob.token)
            // The other node knows the keys once it heard of them.
            for _ in 0..<50 where try await aliceThere.get("/api/v1/jobs").status != 200 {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(try await aliceThere.get("/api/v1/jobs").status == 200)
            let aliceStream = try await aliceThere.events("/api/v1/events")
            let bobStream = try await bobThere.events("/api/v1/events")
            let made = try await alice.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:1/a.bin", "paused": true])
            let job = try #require(try made.json()["id"] as? String)
            let seen = try await aliceStream.collect(timeout: 10) { $0.data.contains(job) }
            #expect(seen.last?.data.contains(job) == true)
            let (bobs, _) = await KeyTests.drain(bobStream, for: 1)
            #expect(!bobs.contains { $0.data.contains(job) })

            #expect(try await nodes[0].client.request("DELETE", "/api/v1/keys/\(id)").status == 204)
            var refused = false
            for _ in 0..<50 where !refused {
                refused = try await aliceThere.get("/api/v1/jobs").status == 401
                if !refused { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(refused)
            let (_, ended) = await KeyTests.drain(aliceStream, for: 5)
            #expect(ended)
        }
    }

    /// One slot a node, a key capped at one job: without the cap held across nodes each node would run one of its
    /// jobs. The other node stays idle rather than take a second.
    @Test func maxActiveJobsCountsTheKeysJobsOnEveryNode() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: 4 << 20, seed: 9)
            try await ClusterNodesTests().withNodes(2, maxConcurrent: 1, lease: .seconds(6), token: KeyTests.adminToken) { nodes, _ in
                let (_, capped) = try await KeyTests.makeKey(nodes[0], name: "capped", limits: ["maxActiveJobs": 1])
                let cappedThere = TestClient(port: nodes[1].port, token: capped.token)
                for _ in 0..<50 where try await cappedThere.get("/api/v1/jobs").status != 200 {
                    try await Task.sleep(for: .milliseconds(100))
                }
                var jobs: [String] = []
                for index in 0..<4 {
                    // Made on each node in turn, so that each would claim what it made.
                    let client = index % 2 == 0 ? capped : cappedThere
                    let made = try await client.json("POST", "/api/v1/jobs",
                                                     ["url": nginx.url("/slow/big.bin?rate=262144&n=\(index)"), "dedupe": false])
                    jobs.append(try #require(try made.json()["id"] as? String))
                }
                _ = try await capped.waitForJob(jobs[0]) { $0["state"] as? String == "downloading" }
                var most = 0
                for _ in 0..<20 {
                    let states = try await jobs.asyncMap { try await capped.get("/api/v1/jobs/\($0)").json()["state"] as? String }
                    let leases = try await ClusterNodesTests.leases(nodes[0]) + ClusterNodesTests.leases(nodes[1])
                    most = max(most, states.filter { $0 == "downloading" }.count, leases)
                    try await Task.sleep(for: .milliseconds(200))
                }
                #expect(most == 1, "at most one of the key's jobs runs over both nodes; seen \(most)")
                for job in jobs { _ = try await nodes[0].client.request("POST", "/api/v1/jobs/\(job)/cancel") }
            }
        }
    }

    /// Two nodes each run one of a key's jobs: together they stay near the key's rate, not twice it.
    @Test func maxBytesPerSecondIsSharedBetweenTheNodesRunningTheKeysJobs() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: 24 << 20, seed: 11)
            try await ClusterNodesTests().withNodes(2, maxConcurrent: 1, lease: .seconds(6), token: KeyTests.adminToken) { nodes, _ in
                let (_, paced) = try await KeyTests.makeKey(nodes[0], name: "paced", limits: ["maxBytesPerSecond": 1 << 20])
                let pacedThere = TestClient(port: nodes[1].port, token: paced.token)
                for _ in 0..<50 where try await pacedThere.get("/api/v1/jobs").status != 200 {
                    try await Task.sleep(for: .milliseconds(100))
                }
                var jobs: [String] = []
                for (index, client) in [paced, pacedThere].enumerated() {
                    let made = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/big.bin?n=\(index)"), "dedupe": false])
                    jobs.append(try #require(try made.json()["id"] as? String))
                }
                for job in jobs { _ = try await paced.waitForJob(job) { $0["state"] as? String == "downloading" } }
                let nodesRunning = Set(try await jobs.asyncMap { try await paced.get("/api/v1/jobs/\($0)").json()["node"] as? String })
                #expect(nodesRunning.count == 2, "each node runs one: \(nodesRunning)")
                // Two shares' reads later, sample the two jobs' bytes together.
                try await Task.sleep(for: .seconds(5))
                // Each sample is bracketed by the times before and after its reads (a loaded machine may spread them
                // out): the bytes moved are divided by the widest window they may span.
                func received() async throws -> (bytes: Int, from: Date, to: Date) {
                    let from = Date()
                    let bytes = try await jobs.asyncMap { try await paced.get("/api/v1/jobs/\($0)").json()["bytesReceived"] as? Int ?? 0 }
                    return (bytes.reduce(0, +), from, Date())
                }
                let before = try await received()
                try await Task.sleep(for: .seconds(4))
                let after = try await received()
                let rate = Double(after.bytes - before.bytes) / after.to.timeIntervalSince(before.from)
                #expect(rate < 1.5 * Double(1 << 20), "the key's jobs on two nodes together: \(rate.rounded()) B/s for 1 MiB/s")
                for job in jobs { _ = try await nodes[0].client.request("POST", "/api/v1/jobs/\(job)/cancel") }
            }
        }
    }

    /// A key's `spoolBytes` counts its files on every node: one node runs a 4 MiB file of a key allowed 6 MiB, so the
    /// key's second 4 MiB file, claimed by the other node, fails with `quota_exceeded` before writing. Without the
    /// first node's claim seen there, the second node would find only the bytes the first had fetched so far.
    @Test func spoolBytesCountsTheKeysFilesOnEveryNode() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: 4 << 20, seed: 12)
            try await ClusterNodesTests().withNodes(2, maxConcurrent: 1, lease: .seconds(6), token: KeyTests.adminToken) { nodes, _ in
                let (_, spooled) = try await KeyTests.makeKey(nodes[0], name: "spooled", limits: ["spoolBytes": 6 << 20])
                let spooledThere = TestClient(port: nodes[1].port, token: spooled.token)
                for _ in 0..<50 where try await spooledThere.get("/api/v1/jobs").status != 200 {
                    try await Task.sleep(for: .milliseconds(100))
                }
                let first = try await spooled.json("POST", "/api/v1/jobs",
                                                   ["url": nginx.url("/slow/big.bin?rate=262144&n=1"), "dedupe": false])
                let firstID = try #require(try first.json()["id"] as? String)
                let running = try await spooled.waitForJob(firstID) { $0["node"] is String && $0["state"] as? String == "downloading" }
                let firstNode = try #require(running["node"] as? String)
                // The node with the free slot knows the first file's size and that it runs; the second is made there.
                let other = firstNode == "node-0" ? spooledThere : spooled
                _ = try await other.waitForJob(firstID) {
                    $0["state"] as? String == "downloading" && $0["bytesExpected"] as? Int == 4 << 20
                }
                let second = try await other.json("POST", "/api/v1/jobs",
                                                  ["url": nginx.url("/slow/big.bin?rate=262144&n=2"), "dedupe": false])
                let secondID = try #require(try second.json()["id"] as? String)
                let ended = try await other.waitForJob(secondID) { $0["state"] as? String == "failed" || $0["bytesReceived"] as? Int ?? 0 > 0 }
                let error = ended["error"] as? [String: Any]
                #expect(ended["state"] as? String == "failed", "the second file would take the key past 6 MiB: \(ended)")
                #expect(error?["code"] as? String == "quota_exceeded")
                #expect(ended["bytesReceived"] as? Int ?? -1 == 0)
                if let node = ended["node"] as? String { #expect(node != firstNode) }
                for job in [firstID, secondID] { _ = try await nodes[0].client.request("POST", "/api/v1/jobs/\(job)/cancel") }
            }
        }
    }
}
