import FerryTestSupport
import Foundation
import Testing

/// A key's `bytesPerDay` counted in the store (schema 12): what it fetched before a restart still counts after it,
/// and on several nodes what one node fetched counts on the others (API.md, "API keys").
@Suite("API keys: bytesPerDay across restarts and nodes", .serialized)
struct DailyBytesStoredTests {
    /// Posts a job for `url` until the answer is `429` (the node knows the key's window is full) or `seconds` pass.
    private func refused(_ client: TestClient, _ url: String, within seconds: Double) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var index = 0
        while true {
            index += 1
            let answer = try await client.json("POST", "/api/v1/jobs", ["url": url + "?try=\(index)", "paused": true])
            if answer.status == 429 { return true }
            if Date() > deadline { return false }
            try await Task.sleep(for: .milliseconds(250))
        }
    }

    @Test func whatAKeyFetchedStillCountsAfterARestart() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/day.bin", size: 2 << 20, seed: 3)
            let spool = try Fixture.tempDirectory("ferry-daily-bytes")
            defer { Fixture.removeTree(spool) }
            let first = try await RunningFerry.start(token: KeyTests.adminToken, spool: spool)
            let metered: TestClient
            do {
                let (_, key) = try await KeyTests.makeKey(first, name: "metered", limits: ["bytesPerDay": 1 << 20])
                metered = key
                let job = try #require(try await metered.json("POST", "/api/v1/jobs", ["url": nginx.url("/day.bin")]).json()["id"] as? String)
                _ = try await metered.waitForJob(job) { job in
                    job["state"] as? String == "finished" || (job["error"] as? [String: Any])?["code"] as? String == "quota_exceeded"
                }
                #expect(try await refused(metered, nginx.url("/other.bin"), within: 5))
            } catch {
                await first.stop()
                throw error
            }
            await first.stop()

            let again = try await RunningFerry.start(token: KeyTests.adminToken, spool: spool)
            do {
                let client = TestClient(port: again.port, token: metered.token)
                let answer = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/after.bin"), "paused": true])
                #expect(answer.status == 429, "the restarted node forgot the key's day: \(answer.status)")
            } catch {
                await again.stop()
                throw error
            }
            await again.stop()
        }
    }

    @Test(.enabled(if: !PostgresServer.isSkipped))
    func whatOneNodeFetchedCountsOnTheOthers() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/day.bin", size: 2 << 20, seed: 4)
            try await ClusterNodesTests().withNodes(2, lease: .seconds(6), token: KeyTests.adminToken) { nodes, _ in
                let (_, metered) = try await KeyTests.makeKey(nodes[0], name: "metered", limits: ["bytesPerDay": 1 << 20])
                let there = TestClient(port: nodes[1].port, token: metered.token)
                for _ in 0..<50 where try await there.get("/api/v1/jobs").status != 200 {
                    try await Task.sleep(for: .milliseconds(100))
                }
                // Before: the other node takes the key's jobs.
                #expect(try await there.json("POST", "/api/v1/jobs", ["url": nginx.url("/before.bin"), "paused": true]).status == 201)
                let job = try #require(try await metered.json("POST", "/api/v1/jobs", ["url": nginx.url("/day.bin")]).json()["id"] as? String)
                _ = try await metered.waitForJob(job) { job in
                    job["state"] as? String == "finished" || (job["error"] as? [String: Any])?["code"] as? String == "quota_exceeded"
                }
                // Whichever node ran it, both refuse the key's next job within a few syncs.
                #expect(try await refused(metered, nginx.url("/a.bin"), within: 10))
                #expect(try await refused(there, nginx.url("/b.bin"), within: 10))
            }
        }
    }
}
