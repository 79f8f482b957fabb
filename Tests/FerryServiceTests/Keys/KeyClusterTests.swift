import FerryTestSupport
import Foundation
import Testing

/// API keys on several nodes sharing one PostgreSQL store: a key made on one node works on another, its streams there
/// carry its jobs' events (the stored events keep their key) and no other key's, and a revocation on one node is
/// refused at once on the other (`ferry_keys`).
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
}
