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

    /// Logs in with `token` and returns the `name=value` of the session cookie set.
    private func logIn(_ ferry: RunningFerry, token: String) async throws -> String {
        var anonymous = ferry.client
        anonymous.token = nil
        let login = try await anonymous.json("POST", "/api/v1/session", ["token": token])
        #expect(login.status == 204)
        return String(try #require(login.header("Set-Cookie")).split(separator: ";")[0])
    }

    /// The status of a cookie-authenticated request.
    private func status(_ ferry: RunningFerry, cookie: String) async throws -> Int {
        var anonymous = ferry.client
        anonymous.token = nil
        return try await anonymous.get("/api/v1/jobs", headers: ["Cookie": cookie]).status
    }

    @Test func aLoggedOutCookieStaysRefusedAfterARestart() async throws {
        let spool = try Fixture.tempDirectory("ferry-logout")
        defer { Fixture.removeTree(spool) }
        let token = "s3cret-token"
        let ferry = try await RunningFerry.start(token: token, spool: spool)
        let loggedOut = try await logIn(ferry, token: token)
        let kept = try await logIn(ferry, token: token)
        var anonymous = ferry.client
        anonymous.token = nil
        let logout = try await anonymous.request("DELETE", "/api/v1/session", headers: ["Cookie": loggedOut, "X-Requested-With": "ferry"])
        #expect(logout.status == 204)
        #expect(try await status(ferry, cookie: loggedOut) == 401)
        await ferry.stop()

        let restarted = try await RunningFerry.start(token: token, spool: spool)
        let afterRestart = try await status(restarted, cookie: loggedOut)
        let otherSession = try await status(restarted, cookie: kept)
        await restarted.stop()
        #expect(afterRestart == 401, "a logged-out session cookie must not work again after a restart")
        #expect(otherSession == 200, "sessions not logged out survive a restart")
    }

    @Test func deletingTheSessionSecretOrChangingTheTokenEndsEverySession() async throws {
        let spool = try Fixture.tempDirectory("ferry-rotate")
        defer { Fixture.removeTree(spool) }
        let secretPath = spool + "/session-secret"
        let first = try await RunningFerry.start(token: "token-one", spool: spool)
        let cookie = try await logIn(first, token: "token-one")
        await first.stop()
        var info = stat()
        #expect(stat(secretPath, &info) == 0 && info.st_mode & 0o777 == 0o600, "the secret is kept in the spool, owner only")

        try? FileManager.default.removeItem(atPath: secretPath)
        let rotated = try await RunningFerry.start(token: "token-one", spool: spool)
        let afterRotation = try await status(rotated, cookie: cookie)
        let fresh = try await logIn(rotated, token: "token-one")
        let freshStatus = try await status(rotated, cookie: fresh)
        await rotated.stop()
        #expect(afterRotation == 401, "a rotated session secret ends the sessions signed with the old one")
        #expect(freshStatus == 200)

        let newToken = try await RunningFerry.start(token: "token-two", spool: spool)
        let afterTokenChange = try await status(newToken, cookie: fresh)
        await newToken.stop()
        #expect(afterTokenChange == 401, "a new token ends every session")
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
