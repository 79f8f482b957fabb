import FerryTestSupport
import Foundation
import Testing

/// API keys end to end (API.md, "API keys"): made, listed, changed and revoked by the administrator; a key's token
/// shown once and refused at once after revocation (its streams closed); its own jobs only; `maxJobs`; dedupe and
/// `Idempotency-Key` within one key; logging in to the page with a key.
@Suite("API keys, end to end")
struct KeysEndToEndTests {
    @Test func keysAreMadeListedChangedAndRevoked() async throws {
        try await withFerry(token: KeyTests.adminToken) { ferry in
            let made = try await ferry.client.json("POST", "/api/v1/keys",
                                                   ["name": "ci", "scope": "read", "limits": ["maxActiveJobs": 4]])
            #expect(made.status == 201)
            let key = try made.json()
            let id = try #require(key["id"] as? String)
            let token = try #require(key["token"] as? String)
            #expect(token.hasPrefix("fk_") && token.count == 46)
            #expect(key["name"] as? String == "ci" && key["scope"] as? String == "read")
            #expect((key["limits"] as? [String: Any])?["maxActiveJobs"] as? Int == 4)
            #expect(key["lastUsedAt"] is NSNull)
            #expect(key["createdAt"] is String)

            var reader = ferry.client
            reader.token = token
            #expect(try await reader.get("/api/v1/jobs").status == 200)
            #expect(try await reader.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:1/x"]).status == 403)
            // Keys are the administrator's business (and admin keys').
            #expect(try await reader.get("/api/v1/keys").status == 403)

            let listed = try await ferry.client.get("/api/v1/keys").json()
            let keys = try #require(listed["keys"] as? [[String: Any]])
            #expect(keys.count == 1)
            #expect(keys[0]["token"] == nil)  // shown once only
            #expect(keys[0]["lastUsedAt"] is String)

            let changed = try await ferry.client.json("PATCH", "/api/v1/keys/\(id)",
                                                      ["scope": "write", "limits": ["maxJobs": 0, "maxActiveJobs": NSNull()]])
            #expect(changed.status == 200)
            let limits = try #require(try changed.json()["limits"] as? [String: Any])
            #expect(limits["maxJobs"] as? Int == 0 && limits["maxActiveJobs"] is NSNull)
            // maxJobs 0: a new job is refused with 429 rate_limited.
            let refused = try await reader.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:1/x", "paused": true])
            #expect(refused.status == 429)
            #expect((try refused.json()["error"] as? [String: Any])?["code"] as? String == "rate_limited")

            #expect(try await ferry.client.request("DELETE", "/api/v1/keys/\(id)").status == 204)
            #expect(try await reader.get("/api/v1/jobs").status == 401)
            #expect(try await ferry.client.get("/api/v1/keys/\(id)").status == 404)
            #expect(try await ferry.client.request("DELETE", "/api/v1/keys/\(id)").status == 404)
        }
    }

    @Test func aKeySeesOnlyItsOwnJobsAndTheAdministratorSeesTheirKey() async throws {
        try await withFerry(token: KeyTests.adminToken) { ferry in
            let (_, alice) = try await KeyTests.makeKey(ferry, name: "alice")
            let (_, bob) = try await KeyTests.makeKey(ferry, name: "bob")
            let url = "http://127.0.0.1:1/same.bin"
            let first = try await alice.json("POST", "/api/v1/jobs", ["url": url, "paused": true],
                                             headers: ["Idempotency-Key": "k1"])
            #expect(first.status == 201)
            let aliceJob = try #require(try first.json()["id"] as? String)
            // Dedupe and Idempotency-Key within one key: bob's identical request makes bob's own job.
            let second = try await bob.json("POST", "/api/v1/jobs", ["url": url, "paused": true],
                                            headers: ["Idempotency-Key": "k1"])
            #expect(second.status == 201)
            #expect(second.header("Idempotent-Replayed") == nil)
            let bobJob = try #require(try second.json()["id"] as? String)
            #expect(bobJob != aliceJob)
            // alice's repeat is deduplicated against her own job.
            let again = try await alice.json("POST", "/api/v1/jobs", ["url": url, "paused": true])
            #expect(again.status == 200)
            #expect(try again.json()["id"] as? String == aliceJob)

            let bobs = try #require(try await bob.get("/api/v1/jobs").json()["jobs"] as? [[String: Any]])
            #expect(bobs.map { $0["id"] as? String } == [bobJob])
            #expect(try await bob.get("/api/v1/jobs/\(aliceJob)").status == 404)
            let all = try #require(try await ferry.client.get("/api/v1/jobs").json()["jobs"] as? [[String: Any]])
            #expect(all.count == 2)
            #expect(Set(all.compactMap { $0["key"] as? String }) == ["alice", "bob"])
        }
    }

    @Test func revocationRefusesTheNextRequestAndClosesTheKeysStreams() async throws {
        try await withFerry(token: KeyTests.adminToken) { ferry in
            let (id, client) = try await KeyTests.makeKey(ferry, name: "watcher")
            let (_, other) = try await KeyTests.makeKey(ferry, name: "other")
            let stream = try await client.events("/api/v1/events")
            #expect(stream.status == 200)
            let survivor = try await other.events("/api/v1/events")
            #expect(try await ferry.client.request("DELETE", "/api/v1/keys/\(id)").status == 204)
            let (_, ended) = await KeyTests.drain(stream, for: 5)
            #expect(ended)
            #expect(try await client.get("/api/v1/jobs").status == 401)
            // Another key's stream stays open.
            let (_, otherEnded) = await KeyTests.drain(survivor, for: 0.5)
            #expect(!otherEnded)
        }
    }

    @Test func thePageLogsInWithAKeyAndSeesOnlyItsJobs() async throws {
        try await withFerry(token: KeyTests.adminToken) { ferry in
            let made = try await ferry.client.json("POST", "/api/v1/keys", ["name": "page", "scope": "write"])
            let id = try #require(try made.json()["id"] as? String)
            let token = try #require(try made.json()["token"] as? String)
            _ = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:1/admin.bin", "paused": true])
            var anonymous = ferry.client
            anonymous.token = nil
            let login = try await anonymous.json("POST", "/api/v1/session", ["token": token])
            #expect(login.status == 204)
            let cookie = try #require(login.header("Set-Cookie")?.split(separator: ";").first.map(String.init))
            let session = try await anonymous.get("/api/v1/session", headers: ["Cookie": cookie])
            #expect(try session.json()["access"] as? String == "full")
            let mine = try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).json()
            #expect((mine["jobs"] as? [Any])?.isEmpty == true)
            #expect(try await ferry.client.request("DELETE", "/api/v1/keys/\(id)").status == 204)
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 401)
        }
    }
}
