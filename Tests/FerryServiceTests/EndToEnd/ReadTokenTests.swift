import FerryService
import FerryTestSupport
import Foundation
import Logging
import Testing

/// `--read-token` (API.md, "Downloader options"): a second token that may list, watch, download content and scrape
/// metrics, and nothing else (`403 forbidden`), as a bearer token and through the page's session.
@Suite("Read-only token, end to end")
struct ReadTokenTests {
    static let token = "full-s3cret"
    static let readToken = "read-0nly-s3cret"

    private func withReadableFerry(_ body: (RunningFerry, TestClient) async throws -> Void) async throws {
        try await withFerry(token: Self.token, { $0.readToken = Self.readToken }) { ferry in
            var reader = ferry.client
            reader.token = Self.readToken
            try await body(ferry, reader)
        }
    }

    private func errorCode(_ response: TestResponse) throws -> String? {
        try response.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String
    }

    @Test func theReadTokenReadsEverythingAndChangesNothing() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/r.bin", size: 70_000, seed: 3)
            try await withReadableFerry { ferry, reader in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/r.bin")])
                #expect(created.status == 201)
                let id = try #require(try created.json()["id"] as? String)
                try await ferry.client.waitForJob(id) { $0["state"] as? String == "finished" }

                // Reads: lists, one job, content (whole, HEAD, a range), settings, metrics, the OpenAPI document.
                #expect(try await reader.get("/api/v1/jobs").status == 200)
                #expect(try await reader.get("/api/v1/jobs/\(id)").status == 200)
                let content = try await reader.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 200)
                #expect(content.body == Fixture.content(size: 70_000, seed: 3))
                #expect(try await reader.request("HEAD", "/api/v1/jobs/\(id)/content").status == 200)
                #expect(try await reader.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=0-9"]).status == 206)
                #expect(try await reader.get("/api/v1/settings").status == 200)
                #expect(try await reader.get("/metrics").status == 200)
                #expect(try await reader.get("/api/v1/openapi.json").status == 200)
                // Event streams: the finished job's stream gives its job event.
                let events = try await reader.events("/api/v1/jobs/\(id)/events")
                let first = try #require(try await events.next())
                #expect(first.event == "job")
                #expect(try first.json()["id"] as? String == id)

                // Anything else: 403 forbidden, and nothing changed.
                let refusals: [(String, String, [String: Any]?)] = [
                    ("POST", "/api/v1/jobs", ["url": nginx.url("/r.bin"), "dedupe": false]),
                    ("PATCH", "/api/v1/jobs/\(id)", ["priority": 5]),
                    ("POST", "/api/v1/jobs/\(id)/pause", nil),
                    ("POST", "/api/v1/jobs/\(id)/resume", nil),
                    ("POST", "/api/v1/jobs/\(id)/cancel", nil),
                    ("DELETE", "/api/v1/jobs/\(id)", nil),
                    ("DELETE", "/api/v1/jobs?olderThan=0s", nil),
                    ("PATCH", "/api/v1/settings", ["maxConcurrent": 9]),
                ]
                for (method, path, body) in refusals {
                    let response = if let body { try await reader.json(method, path, body) } else {
                        try await reader.request(method, path)
                    }
                    #expect(response.status == 403, "\(method) \(path)")
                    #expect(try errorCode(response) == "forbidden", "\(method) \(path)")
                }
                let job = try await ferry.client.get("/api/v1/jobs/\(id)").json()
                #expect(job["state"] as? String == "finished")
                #expect(job["priority"] as? Int == 0)
                let list = try await ferry.client.get("/api/v1/jobs").json()
                #expect((list["jobs"] as? [Any])?.count == 1)
                #expect(try await ferry.client.get("/api/v1/settings").json()["maxConcurrent"] as? Int == 4)
                #expect(try await ferry.client.get("/api/v1/jobs/\(id)/content").status == 200)

                // A wrong token is still unauthorized, not forbidden.
                var stranger = ferry.client
                stranger.token = "read-0nly-s3creT"
                #expect(try await stranger.get("/api/v1/jobs").status == 401)
                #expect(try await stranger.json("POST", "/api/v1/jobs", ["url": nginx.url("/r.bin")]).status == 401)
            }
        }
    }

    @Test func aSessionOpenedWithTheReadTokenStaysReadOnly() async throws {
        try await withReadableFerry { ferry, _ in
            var anonymous = ferry.client
            anonymous.token = nil
            #expect(try await anonymous.get("/api/v1/session").status == 401)
            let login = try await anonymous.json("POST", "/api/v1/session", ["token": Self.readToken])
            #expect(login.status == 204)
            let cookie = String(try #require(login.header("Set-Cookie")).split(separator: ";")[0])
            let session = try await anonymous.get("/api/v1/session", headers: ["Cookie": cookie])
            #expect(session.status == 200)
            #expect(try session.json()["access"] as? String == "read-only")
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 200)
            #expect(try await anonymous.get("/api/v1/settings", headers: ["Cookie": cookie]).status == 200)
            let change = try await anonymous.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/x", "paused": true],
                                                 headers: ["Cookie": cookie, "X-Requested-With": "ferry"])
            #expect(change.status == 403)
            #expect(try errorCode(change) == "forbidden")
            let settings = try await anonymous.json("PATCH", "/api/v1/settings", ["maxBytesPerSecond": 1000],
                                                   headers: ["Cookie": cookie, "X-Requested-With": "ferry"])
            #expect(settings.status == 403)
            #expect(try await ferry.client.get("/api/v1/settings").json()["maxBytesPerSecond"] is NSNull)

            // The full token's session may change state, and says so.
            let full = try await anonymous.json("POST", "/api/v1/session", ["token": Self.token])
            let fullCookie = String(try #require(full.header("Set-Cookie")).split(separator: ";")[0])
            #expect(try await anonymous.get("/api/v1/session", headers: ["Cookie": fullCookie]).json()["access"] as? String == "full")
            #expect(try await anonymous.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/x", "paused": true],
                                             headers: ["Cookie": fullCookie, "X-Requested-With": "ferry"]).status == 201)
            #expect(try await ferry.client.get("/api/v1/session").json()["access"] as? String == "full")

            // A read-only session may log out; its cookie is refused afterwards.
            let logout = try await anonymous.request("DELETE", "/api/v1/session", headers: ["Cookie": cookie, "X-Requested-With": "ferry"])
            #expect(logout.status == 204)
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 401)
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": fullCookie]).status == 200)
        }
    }

    @Test func theOpenAPIAnswersFullAccessAndARestrictingReadTokenNeedsAToken() async throws {
        try await withFerry { ferry in
            let session = try await ferry.client.get("/api/v1/session")
            #expect(try session.json()["access"] as? String == "full")
        }
        for (token, readToken) in [(nil, "r"), ("same", "same")] {
            var configuration = ServiceConfiguration()
            configuration.port = 0
            configuration.spool = try Fixture.tempDirectory("ferry-read-token")
            defer { Fixture.removeTree(configuration.spool) }
            configuration.token = token
            configuration.readToken = readToken
            var logger = Logger(label: "read-token-test")
            logger.logLevel = .critical
            let service = FerryService(configuration: configuration, logger: logger)
            await #expect(throws: ServiceError.self, "token \(token ?? "none"), read token \(readToken)") {
                try await service.start()
            }
            await service.stop()
        }
    }

    @Test func theReadTokenIsResolvedFromTheFlagOrItsVariable() throws {
        let flag = try ServiceConfiguration.resolve(flags: [.readToken: "a"], environment: ["FERRY_READ_TOKEN": "b"])
        #expect(flag.readToken == "a")
        let variable = try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_READ_TOKEN": "b"])
        #expect(variable.readToken == "b")
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: [:]).readToken == nil)
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.readToken: ""], environment: [:]) }
    }
}
