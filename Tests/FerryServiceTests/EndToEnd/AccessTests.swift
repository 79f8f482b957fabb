import FerryTestSupport
import Foundation
import Testing

/// Authentication, sessions, CSRF and the open-mode Host check (API.md, "Authentication").
@Suite("Access control, end to end")
struct AccessTests {
    @Test func tokenModeNeedsBearerOrSession() async throws {
        try await withFerry(token: "s3cret-token") { ferry in
            var anonymous = ferry.client
            anonymous.token = nil
            let refused = try await anonymous.get("/api/v1/jobs")
            #expect(refused.status == 401)
            #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(try refused.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "unauthorized")
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Authorization": "Bearer wrong"]).status == 401)
            #expect(try await anonymous.get("/metrics").status == 401)
            #expect(try await anonymous.get("/healthz").status == 200)
            #expect(try await anonymous.get("/readyz").status == 200)
            #expect(try await anonymous.get("/").status == 200)
            #expect(try await ferry.client.get("/api/v1/jobs").status == 200)
            #expect(try await ferry.client.get("/metrics").status == 200)

            // The page's session: cookie set by POST /api/v1/session.
            #expect(try await anonymous.json("POST", "/api/v1/session", ["token": "nope"]).status == 401)
            let login = try await anonymous.json("POST", "/api/v1/session", ["token": "s3cret-token"])
            #expect(login.status == 204)
            let setCookie = try #require(login.header("Set-Cookie"))
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            let cookie = String(setCookie.split(separator: ";")[0])
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 200)
            // State changes with the cookie need the CSRF header.
            let withoutHeader = try await anonymous.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/c", "paused": true],
                                                   headers: ["Cookie": cookie])
            #expect(withoutHeader.status == 403)
            let withHeader = try await anonymous.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/c", "paused": true],
                                                headers: ["Cookie": cookie, "X-Requested-With": "ferry"])
            #expect(withHeader.status == 201)
            // Bearer requests need no CSRF header.
            #expect(try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/d", "paused": true]).status == 201)
            // Logging out ends the session.
            let logout = try await anonymous.request("DELETE", "/api/v1/session", headers: ["Cookie": cookie, "X-Requested-With": "ferry"])
            #expect(logout.status == 204)
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).status == 401)
            // A forged cookie is refused.
            #expect(try await anonymous.get("/api/v1/jobs", headers: ["Cookie": "ferry_session=v1.9999999999.00.00"]).status == 401)
        }
    }

    @Test func openModeRefusesForeignHostsAndOrigins() async throws {
        try await withFerry { ferry in
            let ok = try await ferry.client.get("/api/v1/jobs")
            #expect(ok.status == 200)
            let port = ferry.port
            let rebinding = try await offThePool {
                let connection = try TestConnection(port: port)
                try connection.send("GET /api/v1/jobs HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(rebinding.status == 403)
            #expect(try rebinding.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "forbidden")
            let crossSite = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/x"],
                                                  headers: ["Origin": "http://evil.example"])
            #expect(crossSite.status == 403)
        }
    }

    @Test func operationsEndpointsAnswer() async throws {
        try await withFerry { ferry in
            let health = try await ferry.client.get("/healthz")
            #expect(health.status == 200)
            #expect(try health.json()["status"] as? String == "ok")
            let ready = try await ferry.client.get("/readyz")
            #expect(ready.status == 200)
            let metrics = try await ferry.client.get("/metrics")
            #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
            for family in ["ferry_jobs{state=\"waiting\"}", "ferry_downloaded_bytes_total", "ferry_http_requests_total",
                           "ferry_sse_subscribers", "ferry_spool_bytes", "ferry_spool_free_bytes",
                           "ferry_download_speed_bytes_per_second"] {
                #expect(metrics.text.contains(family), "\(family) missing from /metrics")
            }
            let openapi = try await ferry.client.get("/api/v1/openapi.json")
            #expect(openapi.status == 200)
            #expect(try openapi.json()["openapi"] as? String == "3.1.0")
        }
    }

    @Test func readinessFailsWhenFreeSpaceIsBelowTheReserve() async throws {
        try await withFerry({ $0.minFreeSpace = Int64.max / 2 }) { ferry in
            let ready = try await ferry.client.get("/readyz")
            #expect(ready.status == 503)
            let reasons = try #require(try ready.json()["reasons"] as? [String])
            #expect(reasons.contains { $0.contains("free space") })
        }
    }
}
