import FerryTestSupport
import Foundation
import Testing

/// aria2's RPC with API keys (API.md, "API keys" and "aria2 JSON-RPC"): a key's secret is its token, and its calls see
/// and change only its own jobs; another key's gid is not found, as an absent one.
@Suite("API keys through aria2's RPC")
struct KeysAria2Tests {
    /// One call with `secret`; the answer's `result`, or its `error` object.
    static func call(_ client: TestClient, _ method: String, secret: String, _ params: [Any] = []) async throws
        -> (result: Any?, error: [String: Any]?)
    {
        var anonymous = client
        anonymous.token = nil
        let body: [String: Any] = ["jsonrpc": "2.0", "id": "1", "method": method, "params": ["token:" + secret] + params]
        let answer = try await anonymous.json("POST", "/jsonrpc", body).json()
        return (answer["result"], answer["error"] as? [String: Any])
    }

    @Test func aKeysCallsSeeOnlyItsJobs() async throws {
        try await withFerry(token: KeyTests.adminToken) { ferry in
            let (_, first) = try await KeyTests.makeKey(ferry, name: "first")
            let (_, second) = try await KeyTests.makeKey(ferry, name: "second")
            let firstToken = try #require(first.token), secondToken = try #require(second.token)
            let added = try await Self.call(ferry.client, "aria2.addUri", secret: firstToken,
                                            [["http://127.0.0.1:9/k.bin"], ["pause": "true"]])
            let gid = try #require(added.result as? String)
            // The owner and the administrator see it; the other key does not, in a list or by its gid.
            let mine = try await Self.call(ferry.client, "aria2.tellWaiting", secret: firstToken, [0, 100, ["gid"]])
            #expect((mine.result as? [[String: Any]])?.compactMap { $0["gid"] as? String } == [gid])
            let admin = try await Self.call(ferry.client, "aria2.tellStatus", secret: KeyTests.adminToken, [gid, ["gid"]])
            #expect((admin.result as? [String: Any])?["gid"] as? String == gid)
            let theirs = try await Self.call(ferry.client, "aria2.tellWaiting", secret: secondToken, [0, 100, ["gid"]])
            #expect((theirs.result as? [[String: Any]])?.isEmpty == true)
            for method in ["aria2.tellStatus", "aria2.unpause", "aria2.remove", "aria2.removeDownloadResult"] {
                let refused = try await Self.call(ferry.client, method, secret: secondToken, [gid])
                #expect(refused.error?["message"] as? String == "GID \(gid) is not found", "\(method): \(refused)")
            }
            _ = try await Self.call(ferry.client, "aria2.purgeDownloadResult", secret: secondToken)
            // Still there, still paused; the job belongs to the first key in the REST API too.
            let job = try await first.get("/api/v1/jobs").json()
            let jobs = try #require(job["jobs"] as? [[String: Any]])
            #expect(jobs.count == 1 && jobs[0]["gid"] as? String == gid && jobs[0]["state"] as? String == "paused")
            let others = try await second.get("/api/v1/jobs").json()["jobs"] as? [Any]
            #expect(others?.isEmpty == true)
            // The settings are the administrator's.
            let settings = try await Self.call(ferry.client, "aria2.changeGlobalOption", secret: secondToken,
                                               [["max-concurrent-downloads": "2"]])
            #expect(settings.error?["message"] as? String == "Unauthorized")
        }
    }
}
