import FerryCore
import FerryTestSupport
import Foundation
import Testing

/// Creating jobs: dedupe, Idempotency-Key, validation of every field.
@Suite("Submitting jobs")
struct SubmissionTests {
    @Test func dedupeReturnsTheExistingJob() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            let first = try await client.json("POST", "/api/v1/jobs", ["url": "HTTP://Example.COM:80/a?b=1", "paused": true])
            #expect(first.status == 201)
            let id = try #require(try first.json()["id"] as? String)
            let again = try await client.json("POST", "/api/v1/jobs", ["url": "http://example.com/a?b=1"])
            #expect(again.status == 200)
            #expect(try again.json()["id"] as? String == id)
            let otherHeaders = try await client.json("POST", "/api/v1/jobs", ["url": "http://example.com/a?b=1", "headers": ["X-A": "1"], "paused": true])
            #expect(otherHeaders.status == 201)
            let notDeduped = try await client.json("POST", "/api/v1/jobs", ["url": "http://example.com/a?b=1", "dedupe": false, "paused": true])
            #expect(notDeduped.status == 201)
            let secondID = try #require(try notDeduped.json()["id"] as? String)
            #expect(secondID != id)
            // A cancelled job is not a dedupe match (both jobs for this URL and headers are cancelled).
            _ = try await client.request("POST", "/api/v1/jobs/\(id)/cancel")
            _ = try await client.request("POST", "/api/v1/jobs/\(secondID)/cancel")
            let afterCancel = try await client.json("POST", "/api/v1/jobs", ["url": "http://example.com/a?b=1", "paused": true])
            #expect(afterCancel.status == 201)
        }
    }

    @Test func idempotencyKeyReplaysTheFirstAnswer() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            let body: [String: Any] = ["url": "http://127.0.0.1:9/idem", "paused": true, "dedupe": false]
            let first = try await client.json("POST", "/api/v1/jobs", body, headers: ["Idempotency-Key": "k-1"])
            #expect(first.status == 201)
            let second = try await client.json("POST", "/api/v1/jobs", body, headers: ["Idempotency-Key": "k-1"])
            #expect(second.status == 201)
            #expect(second.body == first.body)
            #expect(second.header("Location") == first.header("Location"))
            let different = try await client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/other"], headers: ["Idempotency-Key": "k-1"])
            #expect(different.status == 409)
            let list = try await client.get("/api/v1/jobs").json()
            #expect((list["jobs"] as? [Any])?.count == 1)
        }
    }

    @Test func idempotencyKeysSurviveARestart() async throws {
        let spool = try Fixture.tempDirectory("ferry-idem")
        defer { Fixture.removeTree(spool) }
        let body: [String: Any] = ["url": "http://127.0.0.1:9/kept", "paused": true]
        let ferry = try await RunningFerry.start(spool: spool)
        let first = try await ferry.client.json("POST", "/api/v1/jobs", body, headers: ["Idempotency-Key": "restart"])
        await ferry.stop()
        let again = try await RunningFerry.start(spool: spool)
        let second = try await again.client.json("POST", "/api/v1/jobs", body, headers: ["Idempotency-Key": "restart"])
        let jobs = try await again.client.get("/api/v1/jobs").json()["jobs"] as? [Any]
        await again.stop()
        #expect(first.status == 201 && second.status == 201)
        #expect(try first.json()["id"] as? String == second.json()["id"] as? String)
        #expect(jobs?.count == 1)
    }

    @Test(arguments: [
        (#"{"url":"not a url"}"#, 400, "invalid_url"),
        (#"{"url":"gopher://example.org/a"}"#, 400, "unsupported_scheme"),
        (#"{"url":"file:///etc/passwd"}"#, 400, "unsupported_scheme"),
        (#"{}"#, 400, "invalid_request"),
        (#"{"url":5}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","sha256":"abc"}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","connections":17}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","priority":"high"}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","maxBytesPerSecond":0}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","headers":{"Host":"evil"}}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","headers":{"Range":"bytes=0-"}}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","headers":{"Connection":"close"}}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","headers":{"X-Ok":"a\r\nInjected: 1"}}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a","filename":"../.."}"#, 400, "invalid_request"),
        (#"{"url":"http://e.org/a""#, 400, "invalid_request"),
    ])
    func invalidRequestsAreRefusedWithTheirCode(body: String, status: Int, code: String) async throws {
        try await withFerry { ferry in
            let response = try await ferry.client.request("POST", "/api/v1/jobs", body: Array(body.utf8))
            #expect(response.status == status)
            let error = try #require(try response.json()["error"] as? [String: Any])
            #expect(error["code"] as? String == code)
            #expect((error["message"] as? String)?.isEmpty == false)
        }
    }

    @Test(arguments: ["http://127.0.0.1/a", "http://127.1/a", "http://2130706433/a", "http://0x7f000001/a",
                      "http://0177.0.0.1/a", "http://[::1]/a", "http://[::ffff:127.0.0.1]/a", "http://10.1.2.3/a",
                      "http://172.16.0.1/a", "http://192.168.1.1/a", "http://169.254.169.254/latest", "http://100.64.0.1/",
                      "http://0.0.0.0/", "http://[fc00::1]/", "http://[fe80::1]/", "http://localhost:8080/"])
    func privateDestinationsAreRefusedAtSubmit(url: String) async throws {
        try await withFerry({ $0.allowPrivateNetworks = false }) { ferry in
            let response = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
            #expect(response.status == 403, "\(url)")
            #expect(try response.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "forbidden_destination")
        }
    }

    /// `--allow-network 127.0.0.1/32` opens that address only: the local origin downloads, every other non-public
    /// destination is still refused at submit time (10/8, ::1) or on the address connected (a name for ::1).
    @Test func allowNetworkOpensOnlyItsBlock() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/narrow.bin", size: 70_000, seed: 3)
            try await withFerry({
                $0.allowPrivateNetworks = false
                $0.destinations.allowedNetworks = [IPNetwork("127.0.0.1/32")!]
            }) { ferry in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/narrow.bin")])
                #expect(created.status == 201)
                let id = try #require(try created.json()["id"] as? String)
                let finished = try await ferry.client.waitForJob(id) { ["finished", "failed"].contains($0["state"] as? String) }
                #expect(finished["state"] as? String == "finished")
                for url in ["http://10.1.2.3/a", "http://[::1]:\(nginx.port)/narrow.bin", "http://127.0.0.2:\(nginx.port)/narrow.bin"] {
                    let refused = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
                    #expect(refused.status == 403, "\(url)")
                }
            }
        }
    }

    /// Userinfo goes to the origin and nowhere else: the job, the list and the events show it as `***@`.
    @Test func userinfoIsNeverShown() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/secret.bin", size: 5_000, seed: 4)
            try await withFerry { ferry in
                let events = try await ferry.client.events("/api/v1/events")
                let url = "http://alice:s3cret@127.0.0.1:\(nginx.port)/secret.bin"
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
                #expect(created.status == 201)
                #expect(!created.text.contains("s3cret"))
                let id = try #require(try created.json()["id"] as? String)
                #expect(try created.json()["url"] as? String == "http://***@127.0.0.1:\(nginx.port)/secret.bin")
                let finished = try await ferry.client.waitForJob(id) { ["finished", "failed"].contains($0["state"] as? String) }
                #expect(finished["state"] as? String == "finished")
                #expect((finished["finalUrl"] as? String)?.contains("s3cret") == false)
                #expect(!(try await ferry.client.get("/api/v1/jobs").text.contains("s3cret")))
                let seen = try await events.collect { ($0.event == "job") && ((try? $0.json()["state"] as? String) == "finished") }
                #expect(!seen.contains { $0.data.contains("s3cret") })
                let access = nginx.accessLog().filter { $0.path.hasPrefix("/secret.bin") }
                #expect(!access.isEmpty, "the credentials still reach the origin's request")
            }
        }
    }

    @Test func unknownFieldsAreIgnoredAndFilenamesSanitized() async throws {
        try await withFerry { ferry in
            let response = try await ferry.client.json("POST", "/api/v1/jobs",
                                                 ["url": "http://127.0.0.1:9/x", "paused": true, "colour": "blue",
                                                  "filename": "../../etc/\u{202E}passwd"])
            #expect(response.status == 201)
            let name = try #require(try response.json()["filename"] as? String)
            #expect(!name.contains("/") && !name.contains("..") && !name.unicodeScalars.contains("\u{202E}"))
        }
    }

    @Test func bodiesMustBeJSONAndSmall() async throws {
        try await withFerry { ferry in
            let form = try await ferry.client.request("POST", "/api/v1/jobs", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                                body: Array("url=http://e.org".utf8))
            #expect(form.status == 415)
            let big = try await ferry.client.request("POST", "/api/v1/jobs", body: Array(repeating: UInt8(ascii: " "), count: 2 << 20))
            #expect(big.status == 413)
        }
    }
}
