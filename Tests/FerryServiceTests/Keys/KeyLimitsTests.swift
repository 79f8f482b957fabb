import FerryTestSupport
import Foundation
import Testing

/// A key's `maxActiveJobs` and its share of the slots, end to end (API.md, "API keys": "more of this key's jobs wait";
/// "one key's queued jobs never hold back another key's one").
@Suite("API keys: limits, end to end")
struct KeyLimitsTests {
    @Test func maxActiveJobsMakesTheRestWaitAndAnotherKeyStillRuns() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: 4 << 20, seed: 5)
            try await withFerry(token: KeyTests.adminToken) { ferry in
                let (id, busy) = try await KeyTests.makeKey(ferry, name: "busy", limits: ["maxActiveJobs": 1])
                let (_, quiet) = try await KeyTests.makeKey(ferry, name: "quiet")
                var busyJobs: [String] = []
                for index in 0..<3 {
                    let made = try await busy.json("POST", "/api/v1/jobs",
                                                   ["url": nginx.url("/slow/big.bin?rate=262144&n=\(index)"), "dedupe": false])
                    busyJobs.append(try #require(try made.json()["id"] as? String))
                }
                let quietJob = try #require(try await quiet.json("POST", "/api/v1/jobs",
                                                                 ["url": nginx.url("/slow/big.bin?rate=262144&q=1")]).json()["id"] as? String)
                _ = try await quiet.waitForJob(quietJob) { $0["state"] as? String == "downloading" }
                try await Task.sleep(for: .milliseconds(500))
                let states = try await busyJobs.asyncMap { try await busy.get("/api/v1/jobs/\($0)").json()["state"] as? String }
                #expect(states.filter { $0 == "downloading" }.count == 1, "\(states)")
                #expect(states.filter { $0 == "waiting" }.count == 2, "\(states)")

                // Raised, the limit lets a second one start at once.
                #expect(try await ferry.client.json("PATCH", "/api/v1/keys/\(id)", ["limits": ["maxActiveJobs": 2]]).status == 200)
                _ = try await busy.waitForJob(busyJobs[1]) { $0["state"] as? String == "downloading" }
                for job in busyJobs + [quietJob] { _ = try await ferry.client.request("POST", "/api/v1/jobs/\(job)/cancel") }
            }
        }
    }
}

extension KeyLimitsTests {
    /// A key's `maxBytesPerSecond` holds over all its transfers together.
    @Test func maxBytesPerSecondHoldsOverAllTheKeysTransfers() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/big.bin", size: 16 << 20, seed: 6)
            try await withFerry(token: KeyTests.adminToken) { ferry in
                let limit = 262_144
                let (_, slow) = try await KeyTests.makeKey(ferry, name: "slow", limits: ["maxBytesPerSecond": limit])
                var jobs: [String] = []
                for index in 0..<2 {
                    let made = try await slow.json("POST", "/api/v1/jobs", ["url": nginx.url("/big.bin?n=\(index)"), "dedupe": false])
                    jobs.append(try #require(try made.json()["id"] as? String))
                }
                // The rate between two samples a few seconds apart, once the transfers run: the start (the bucket's
                // burst, requests made before the first sample) stays out of it. A sample reads both jobs one after
                // the other, which a loaded machine may spread out, so each is bracketed by the times before and after
                // it: the bytes moved are held to the widest window they may span, and to a quarter of the narrowest (the
                // transfers must move, but a starved machine may slow them below the limit).
                func received() async throws -> (bytes: Int, from: Date, to: Date) {
                    let from = Date()
                    let bytes = try await jobs.asyncMap { try await slow.get("/api/v1/jobs/\($0)").json()["bytesReceived"] as? Int ?? 0 }
                    return (bytes.reduce(0, +), from, Date())
                }
                try await Task.sleep(for: .seconds(1))
                let first = try await received()
                try await Task.sleep(for: .seconds(3))
                let second = try await received()
                let moved = second.bytes - first.bytes
                let widest = second.to.timeIntervalSince(first.from), narrowest = second.from.timeIntervalSince(first.to)
                #expect(Double(moved) > Double(limit) * narrowest / 4, "\(moved) bytes in \(narrowest)–\(widest) s")
                #expect(Double(moved) <= Double(limit) * (widest + 0.25) + 65_536, "\(moved) bytes in \(narrowest)–\(widest) s")
                for job in jobs { _ = try await ferry.client.request("POST", "/api/v1/jobs/\(job)/cancel") }
            }
        }
    }
}

extension KeyLimitsTests {
    /// A key's `spoolBytes`: a file that would take its files past it fails with quota_exceeded before writing;
    /// another key's same file still fits.
    @Test func spoolBytesHoldsForTheKeysFiles() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/part.bin", size: 70_000, seed: 8)
            try await withFerry(token: KeyTests.adminToken) { ferry in
                let (_, small) = try await KeyTests.makeKey(ferry, name: "small", limits: ["spoolBytes": 100_000])
                let (_, other) = try await KeyTests.makeKey(ferry, name: "other")
                let first = try #require(try await small.json("POST", "/api/v1/jobs", ["url": nginx.url("/part.bin?n=1")]).json()["id"] as? String)
                _ = try await small.waitForJob(first) { $0["state"] as? String == "finished" }
                let second = try #require(try await small.json("POST", "/api/v1/jobs", ["url": nginx.url("/part.bin?n=2")]).json()["id"] as? String)
                let failed = try await small.waitForJob(second) { $0["state"] as? String == "failed" }
                #expect((failed["error"] as? [String: Any])?["code"] as? String == "quota_exceeded", "\(failed)")
                let theirs = try #require(try await other.json("POST", "/api/v1/jobs", ["url": nginx.url("/part.bin?n=3")]).json()["id"] as? String)
                _ = try await other.waitForJob(theirs) { $0["state"] as? String == "finished" }
            }
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

extension KeyLimitsTests {
    /// A key's `bytesPerDay`: once its transfers fetched that much, its running job waits with `quota_exceeded`, a new
    /// job is `429` with `Retry-After`, another key is untouched, and a raised limit lets the job continue and finish.
    @Test func bytesPerDayMakesTheKeysJobWaitAndRefusesItsNewOnes() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/day.bin", size: 4 << 20, seed: 9)
            try await withFerry(token: KeyTests.adminToken) { ferry in
                let (id, metered) = try await KeyTests.makeKey(ferry, name: "metered", limits: ["bytesPerDay": 1 << 20])
                let (_, other) = try await KeyTests.makeKey(ferry, name: "unmetered")
                let job = try #require(try await metered.json("POST", "/api/v1/jobs",
                                                              ["url": nginx.url("/slow/day.bin?rate=1048576")]).json()["id"] as? String)
                let waiting = try await metered.waitForJob(job) {
                    $0["state"] as? String == "waiting"
                        && ($0["error"] as? [String: Any])?["code"] as? String == "quota_exceeded"
                }
                let stopped = waiting["bytesReceived"] as? Int ?? 0
                #expect(stopped >= 1 << 20 && stopped < 4 << 20, "\(waiting)")
                try await Task.sleep(for: .seconds(1))
                let still = try await metered.get("/api/v1/jobs/\(job)").json()
                #expect(still["state"] as? String == "waiting", "\(still)")
                #expect((still["bytesReceived"] as? Int ?? 0) < 4 << 20)

                let refused = try await metered.json("POST", "/api/v1/jobs", ["url": nginx.url("/day.bin?n=2")])
                #expect(refused.status == 429)
                #expect((try refused.json()["error"] as? [String: Any])?["code"] as? String == "rate_limited")
                let retryAfter = Int(refused.header("Retry-After") ?? "") ?? 0
                #expect((1...86_400).contains(retryAfter), "Retry-After \(refused.header("Retry-After") ?? "none")")

                let theirs = try #require(try await other.json("POST", "/api/v1/jobs", ["url": nginx.url("/day.bin?n=3")]).json()["id"] as? String)
                _ = try await other.waitForJob(theirs) { $0["state"] as? String == "finished" }

                #expect(try await ferry.client.json("PATCH", "/api/v1/keys/\(id)", ["limits": ["bytesPerDay": 100 << 20]]).status == 200)
                let finished = try await metered.waitForJob(job) { $0["state"] as? String == "finished" }
                #expect(finished["bytesReceived"] as? Int == 4 << 20 && finished["error"] is NSNull, "\(finished)")
            }
        }
    }
}
