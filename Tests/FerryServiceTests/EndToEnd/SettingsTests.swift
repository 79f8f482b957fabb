import FerryService
import FerryTestSupport
import Foundation
import Testing

/// `GET`/`PATCH /api/v1/settings` and `--max-bytes-per-second` (API.md, "Downloader options"): the flags give the
/// starting values, a change reaches running transfers at once and is kept across restarts, where it wins over the
/// flags.
@Suite("Runtime settings, end to end")
struct SettingsTests {
    private func settings(_ ferry: RunningFerry) async throws -> [String: Any] {
        let response = try await ferry.client.get("/api/v1/settings")
        #expect(response.status == 200)
        return try response.json()
    }

    private func patch(_ ferry: RunningFerry, _ body: [String: Any]) async throws -> TestResponse {
        try await ferry.client.json("PATCH", "/api/v1/settings", body)
    }

    @Test func theFlagsGiveTheStartAndPatchValidatesItsFields() async throws {
        try await withFerry({ $0.maxBytesPerSecond = 2_000_000; $0.maxConcurrent = 3 }) { ferry in
            let start = try await settings(ferry)
            #expect(start["maxBytesPerSecond"] as? Int == 2_000_000)
            #expect(start["maxConcurrent"] as? Int == 3)

            let invalid: [[String: Any]] = [
                ["maxBytesPerSecond": 0], ["maxBytesPerSecond": -5], ["maxBytesPerSecond": "fast"], ["maxBytesPerSecond": 1.5],
                ["maxConcurrent": 0], ["maxConcurrent": 100_000], ["maxConcurrent": NSNull()], ["maxConcurrent": "2"],
                [:], ["unknown": 1],
            ]
            for body in invalid {
                let response = try await patch(ferry, body)
                #expect(response.status == 400, "\(body)")
                #expect(try response.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "invalid_request", "\(body)")
            }
            let notJSON = try await ferry.client.request("PATCH", "/api/v1/settings", headers: ["Content-Type": "text/plain"],
                                                         body: Array(#"{"maxConcurrent": 2}"#.utf8))
            #expect(notJSON.status == 415)
            #expect(try await ferry.client.request("PATCH", "/api/v1/settings", body: Array("{".utf8)).status == 400)
            #expect(try await ferry.client.json("POST", "/api/v1/settings", ["maxConcurrent": 2]).status == 405)
            #expect(try await settings(ferry)["maxConcurrent"] as? Int == 3, "nothing changed")

            let cleared = try await patch(ferry, ["maxBytesPerSecond": NSNull()])
            #expect(cleared.status == 200)
            #expect(try cleared.json()["maxBytesPerSecond"] is NSNull)
            #expect(try cleared.json()["maxConcurrent"] as? Int == 3)
            let both = try await patch(ferry, ["maxBytesPerSecond": 750_000, "maxConcurrent": 6, "ignored": true])
            #expect(both.status == 200)
            let now = try await settings(ferry)
            #expect(now["maxBytesPerSecond"] as? Int == 750_000)
            #expect(now["maxConcurrent"] as? Int == 6)
        }
    }

    @Test func theSizeFlagAndItsVariableAcceptUnits() throws {
        let flag = try ServiceConfiguration.resolve(flags: [.maxBytesPerSecond: "5MiB"], environment: ["FERRY_MAX_BYTES_PER_SECOND": "1K"])
        #expect(flag.maxBytesPerSecond == 5 << 20)
        let variable = try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_MAX_BYTES_PER_SECOND": "1.5M"])
        #expect(variable.maxBytesPerSecond == 1_500_000)
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: [:]).maxBytesPerSecond == nil)
        for bad in ["0", "-1", "fast"] {
            #expect(throws: ConfigurationError.self, "\(bad)") {
                try ServiceConfiguration.resolve(flags: [.maxBytesPerSecond: bad], environment: [:])
            }
        }
    }

    /// The total speed of `ids`, bytes per second, over `seconds`: the slope of a least-squares line through the
    /// sum of their `bytesReceived`, polled every 100 ms (so the job views' own sampling averages out). A process
    /// starved on a loaded machine may get few polls in `seconds`: it polls on until it has 10, so the line has a
    /// slope (with fewer than two, it was NaN, and the failure message's `Int(NaN)` stopped the whole test process).
    private func totalRate(_ ferry: RunningFerry, seconds: Double) async throws -> Double {
        var points: [(Double, Double)] = []
        let start = Date()
        while Date().timeIntervalSince(start) < seconds || points.count < 10 {
            let jobs = try await listJobs(ferry)
            let bytes = jobs.reduce(0) { $0 + (($1["bytesReceived"] as? Int) ?? 0) }
            points.append((Date().timeIntervalSince(start), Double(bytes)))
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let n = Double(points.count)
        let meanT = points.reduce(0) { $0 + $1.0 } / n
        let meanB = points.reduce(0) { $0 + $1.1 } / n
        let covariance = points.reduce(0) { $0 + ($1.0 - meanT) * ($1.1 - meanB) }
        let variance = points.reduce(0) { $0 + ($1.0 - meanT) * ($1.0 - meanT) }
        return covariance / variance
    }

    private func states(_ ferry: RunningFerry) async throws -> [String] {
        try await listJobs(ferry).compactMap { $0["state"] as? String }
    }

    /// The job list; one poll of the ~30 this test makes is asked again if its connection was reset (seen once
    /// in a fresh-clone run of the whole parallel suite on 2 cores; the server's own handling of connections is
    /// the HTTP tests' and the hostile suite's to judge, not this one's).
    private func listJobs(_ ferry: RunningFerry) async throws -> [[String: Any]] {
        let response: TestResponse
        do {
            response = try await ferry.client.get("/api/v1/jobs")
        } catch TestClientError.closed {
            response = try await ferry.client.get("/api/v1/jobs")
        }
        return try response.json()["jobs"] as? [[String: Any]] ?? []
    }

    @Test func aChangeReachesRunningDownloadsAndIsKeptAcrossARestart() async throws {
        try await withNginx { nginx in
            for index in 0..<3 { try Fixture.writeFile(at: nginx.root + "/s\(index).bin", size: 40_000_000, seed: 50 + index) }
            let spool = try Fixture.tempDirectory("ferry-settings")
            defer { Fixture.removeTree(spool) }
            let flags: (inout ServiceConfiguration) -> Void = { $0.maxBytesPerSecond = 2_000_000; $0.maxConcurrent = 4 }

            let ferry = try await RunningFerry.start(spool: spool, flags)
            do {
                for index in 0..<3 {
                    #expect(try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/s\(index).bin"), "connections": 1]).status == 201)
                }
                try await Task.sleep(nanoseconds: 1_500_000_000)
                let flagged = try await totalRate(ferry, seconds: 3)
                // How closely a limit holds is the engine's tests' to measure (GlobalRateLimitTests: every 2 s window
                // within 10%). Here, measured by polling the API in a full parallel run on 2 cores, rates came out
                // from 0.2× to 2× the limit as the process was starved or the polls' answers were delayed; so this
                // test asks what such a measure can tell: a limit is in force (loopback unlimited is hundreds of
                // MB/s), and the PATCH's lower one replaces it in running transfers and after a restart.
                #expect(flagged < 10_000_000, "the flag's limit: \(flagged.rounded()) B/s")

                let changed = try await ferry.client.json("PATCH", "/api/v1/settings", ["maxBytesPerSecond": 600_000, "maxConcurrent": 2])
                #expect(changed.status == 200)
                try await Task.sleep(nanoseconds: 1_000_000_000)
                // Over 5 s, so that one delayed poll skews the measure less: 600 kB/s against the flag's 2 MB/s.
                let patched = try await totalRate(ferry, seconds: 5)
                #expect(patched < 1_200_000, "after PATCH, running downloads: \(patched.rounded()) B/s, before \(flagged.rounded())")
                let running = try await states(ferry)
                #expect(running.filter { $0 == "downloading" }.count == 3, "running ones are not stopped: \(running)")
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()

            // The same flags again: the values set through the API win.
            let restarted = try await RunningFerry.start(spool: spool, flags)
            do {
                let kept = try await settings(restarted)
                #expect(kept["maxBytesPerSecond"] as? Int == 600_000)
                #expect(kept["maxConcurrent"] as? Int == 2)
                try await Task.sleep(nanoseconds: 1_500_000_000)
                let states = try await states(restarted)
                #expect(states.filter { $0 == "downloading" }.count == 2, "\(states)")
                #expect(states.filter { $0 == "waiting" }.count == 1, "\(states)")
                let rate = try await totalRate(restarted, seconds: 5)
                #expect(rate < 1_200_000, "after the restart: \(rate.rounded()) B/s (the flag's 2 MB/s would be back)")
            } catch {
                await restarted.stop()
                throw error
            }
            await restarted.stop()
        }
    }
}
