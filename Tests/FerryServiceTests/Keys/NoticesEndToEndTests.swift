import FerryTestSupport
import Foundation
import Testing

/// `GET /api/v1/notices` and `POST /api/v1/notices/{id}/retry` (API.md, "API keys"): notices listed by state and job,
/// scoped by key, sent again at once; a delivered one is `409`.
@Suite("Notices, end to end")
struct NoticesEndToEndTests {
    @Test func noticesAreListedScopedAndSentAgain() async throws {
        try await withNginx { nginx in
            try await withFaultOrigin { receiver in
                try await withFerry(token: KeyTests.adminToken, { $0.webhookRetryBase = 60 }) { ferry in
                    let (_, alice) = try await KeyTests.makeKey(ferry, name: "alice")
                    let (_, bob) = try await KeyTests.makeKey(ferry, name: "bob")
                    // A receiver that refuses (403: tried again later) and one that takes it (2xx).
                    let refused = try #require(try await alice.json("POST", "/api/v1/jobs", [
                        "url": "http://127.0.0.1:1/a.bin", "paused": true, "notify": nginx.url("/refuse-upload/hook"),
                    ]).json()["id"] as? String)
                    let taken = try #require(try await alice.json("POST", "/api/v1/jobs", [
                        "url": "http://127.0.0.1:1/b.bin", "paused": true, "notify": receiver.url("/u/hook"),
                    ]).json()["id"] as? String)
                    for job in [refused, taken] {
                        #expect(try await alice.request("POST", "/api/v1/jobs/\(job)/cancel").status == 200)
                    }
                    let pending = try await poll { () -> [String: Any]? in
                        let list = try await alice.get("/api/v1/notices?state=pending&job=\(refused)").json()
                        return (list["notices"] as? [[String: Any]])?.first { $0["lastStatus"] as? Int == 403 }
                    }
                    #expect(pending["type"] as? String == "job.cancelled")
                    #expect(pending["attempts"] as? Int == 1)
                    #expect(pending["nextAttemptAt"] is String && pending["deliveredAt"] is NSNull)
                    let id = try #require(pending["id"] as? String)
                    let delivered = try await poll { () -> [String: Any]? in
                        let list = try await alice.get("/api/v1/notices?state=delivered").json()
                        return (list["notices"] as? [[String: Any]])?.first { $0["jobId"] as? String == taken }
                    }
                    #expect(delivered["deliveredAt"] is String)
                    let deliveredID = try #require(delivered["id"] as? String)

                    // Bob sees none of them, and cannot send them again.
                    let bobs = try await bob.get("/api/v1/notices").json()["notices"] as? [Any]
                    #expect(bobs?.isEmpty == true)
                    #expect(try await bob.request("POST", "/api/v1/notices/\(id)/retry").status == 404)
                    #expect(try await ferry.client.get("/api/v1/notices").json()["notices"].map { ($0 as? [Any])?.count } == 2)

                    // Sent again at once (not in 60 s), with the same id.
                    let again = try await alice.request("POST", "/api/v1/notices/\(id)/retry")
                    #expect(again.status == 200)
                    _ = try await poll { () -> Bool? in
                        let notice = try await alice.get("/api/v1/notices?job=\(refused)").json()["notices"] as? [[String: Any]]
                        return notice?.first?["attempts"] as? Int == 2 ? true : nil
                    }
                    #expect(try await alice.request("POST", "/api/v1/notices/\(deliveredID)/retry").status == 409)
                    #expect(try await alice.get("/api/v1/notices?state=sent").status == 400)
                }
            }
        }
    }

    private func poll<T>(timeout: Double = 15, _ check: () async throws -> T?) async throws -> T {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let value = try await check() { return value }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestClientError.timeout("no notice as expected")
    }
}
