import FerryCore
import Foundation
import Testing

/// `notify` through the API of a running Ferry: checked at submit like `url`, shown with its userinfo hidden; the
/// webhook secret made at the first start. (Delivery to a real receiver: Tests/suites/webhook_suite.py.)
@Suite("Webhooks, end to end")
struct WebhookSubmissionTests {
    static func errorCode(_ response: TestResponse) throws -> String? {
        try response.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String
    }

    @Test func aPrivateNotifyURLIsRefusedUnlessItsNetworkIsAllowed() async throws {
        try await withFerry({ $0.allowPrivateNetworks = false }) { ferry in
            for notify in ["http://127.0.0.1:9/hook", "http://2130706433/hook", "http://localhost/hook", "http://[::1]/hook"] {
                let refused = try await ferry.client.json("POST", "/api/v1/jobs",
                                                          ["url": "https://example.org/a.bin", "notify": notify, "paused": true])
                #expect(refused.status == 403, "\(notify)")
                #expect(try Self.errorCode(refused) == "forbidden_destination")
            }
            let scheme = try await ferry.client.json("POST", "/api/v1/jobs",
                                                     ["url": "https://example.org/a.bin", "notify": "ftp://hooks.example/x"])
            #expect(scheme.status == 400)
            #expect(try Self.errorCode(scheme) == "unsupported_scheme")
            let invalid = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "https://example.org/a.bin", "notify": "http://"])
            #expect(invalid.status == 400)
            #expect(try Self.errorCode(invalid) == "invalid_url")
        }
        try await withFerry({ $0.allowPrivateNetworks = false; $0.destinations.allowedNetworks = [IPNetwork("127.0.0.1/32")!] }) { ferry in
            let created = try await ferry.client.json("POST", "/api/v1/jobs",
                                                      ["url": "https://example.org/a.bin", "notify": "http://127.0.0.1:9/hook", "paused": true])
            #expect(created.status == 201)
        }
    }

    @Test func theJobShowsNotifyWithoutItsUserinfoAndAJobWithoutOneShowsNull() async throws {
        try await withFerry { ferry in
            let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                "url": "https://example.org/a.bin", "notify": "HTTPS://user:secret@Hooks.Example/in?k=1", "paused": true,
            ])
            #expect(created.status == 201)
            let job = try created.json()
            #expect(job["notify"] as? String == "https://***@hooks.example/in?k=1")
            let id = try #require(job["id"] as? String)
            let read = try await ferry.client.get("/api/v1/jobs/\(id)")
            #expect(!String(decoding: read.body, as: UTF8.self).contains("secret"))
            let plain = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "https://example.org/b.bin", "paused": true]).json()
            #expect(plain["notify"] is NSNull)
            // The signing secret was made at start, kept private in the spool.
            let path = ferry.spool + "/webhook-secret"
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(text.hasPrefix("whsec_"))
        }
    }
}
