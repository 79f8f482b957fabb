import FerryTestSupport
import Foundation
import Testing

/// Pause, resume, validators, and `?follow=true`, through the API against real origins.
@Suite("Pause and resume, end to end", .serialized)
struct PauseResumeTests {
    @Test func pauseMidDownloadThenResumeWithARangeRequest() async throws {
        try await withFaultOrigin { origin in
            let size = 4 * 1024 * 1024
            let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 11))
            // The first request (from byte 0) stalls after 1 MiB for a minute, so the pause finds the job downloading
            // however late a loaded machine sends it; the resume's Range request starts elsewhere and runs at once.
            let url = origin.url("/f/big.bin?size=\(size)&seed=11&stall_after=1048576&stall_secs=60&fault_start=0")
            try await withFerry { ferry in
                let client = ferry.client
                let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": url, "connections": 1]).json()["id"] as? String)
                try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 600_000 }
                let paused = try await client.request("POST", "/api/v1/jobs/\(id)/pause")
                #expect(paused.status == 200)
                #expect(try paused.json()["state"] as? String == "paused")
                let kept = try await client.waitForJob(id, timeout: 5) { ($0["bytesReceived"] as? Int ?? 0) > 0 && $0["state"] as? String == "paused" }
                let keptBytes = try #require(kept["bytesReceived"] as? Int)
                #expect(keptBytes < size)
                try await Task.sleep(nanoseconds: 600_000_000)
                // Still paused, bytes kept on disk.
                #expect(try await client.get("/api/v1/jobs/\(id)").json()["state"] as? String == "paused")

                let resumed = try await client.request("POST", "/api/v1/jobs/\(id)/resume")
                #expect(resumed.status == 200)
                let resumedState = try resumed.json()["state"] as? String ?? ""
                // The rest comes at full speed: the job may have finished by the time the answer is written.
                #expect(["waiting", "downloading", "finished"].contains(resumedState), "resume answered \(resumed.status) \(resumed.text)")
                let finished = try await client.waitForJob(id, timeout: 30) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == expected)
                // The resume continues from the kept bytes (a Range from past 0), validated with If-Range.
                let ranged = await origin.requests().filter {
                    $0.path == "/f/big.bin" && ($0.range ?? "bytes=0-").hasPrefix("bytes=") && !($0.range ?? "bytes=0-").hasPrefix("bytes=0-")
                }
                #expect(ranged.count == 1, "one Range request on resume: \(ranged.map(\.range))")
                #expect(ranged.first?.ifRange != nil, "resume must validate with If-Range")
            }
        }
    }

    @Test func etagChangeBetweenPauseAndResumeRestartsWithTheNewContent() async throws {
        try await withFaultOrigin { origin in
            let size = 2 * 1024 * 1024
            // The first request serves seed 3 slowly; every later one serves seed 4 with a new ETag.
            let url = origin.url("/f/changing.bin?size=\(size)&seed=3&etag_change_after=1&rate=524288&key=etag-\(UUID().uuidString)")
            try await withFerry { ferry in
                let client = ferry.client
                let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": url]).json()["id"] as? String)
                let events = try await client.events("/api/v1/jobs/\(id)/events")
                try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 300_000 }
                _ = try await client.request("POST", "/api/v1/jobs/\(id)/pause")
                try await client.waitForJob(id, timeout: 5) { $0["state"] as? String == "paused" }
                _ = try await client.request("POST", "/api/v1/jobs/\(id)/resume")
                let finished = try await client.waitForJob(id, timeout: 40) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 4)))
                let seen = try await events.collect(timeout: 10) { event in
                    event.event == "job" && ((try? event.json()["state"] as? String) == "finished")
                }
                #expect(seen.contains { $0.event == "job" && ((try? $0.json()["restarted"] as? Bool) == true) },
                        "a restart from zero must be announced with \"restarted\": true")
                let content = try await client.get("/api/v1/jobs/\(id)/content").body
                #expect(content.count == size)
                #expect(Fixture.sha256Hex(of: content) == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 4)))
            }
        }
    }

    /// The answer to pause carries the job's final numbers: the bytes on disk once the writer flushed, the same the
    /// job's paused event and later reads give (it used to answer the last progress sample's, up to 250 ms stale).
    @Test func pauseAnswersTheFinalNumbers() async throws {
        try await withNginx { nginx in
            let size = 6 * 1024 * 1024
            try Fixture.writeFile(at: nginx.root + "/numbers.bin", size: size, seed: 12)
            try await withFerry { ferry in
                let client = ferry.client
                let created = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/numbers.bin?rate=2097152"), "connections": 1])
                let id = try #require(try created.json()["id"] as? String)
                let events = try await client.events("/api/v1/jobs/\(id)/events?interval=100")
                try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 700_000 }
                let paused = try await client.request("POST", "/api/v1/jobs/\(id)/pause")
                #expect(paused.status == 200)
                let answer = try paused.json()
                #expect(answer["state"] as? String == "paused")
                let answered = try #require(answer["bytesReceived"] as? Int)
                let onDisk = try #require(try FileManager.default.attributesOfItem(atPath: ferry.spool + "/partial/\(id).part")[.size] as? Int)
                #expect(answered == onDisk, "pause answered \(answered) bytes, \(onDisk) are on disk")
                try await Task.sleep(nanoseconds: 400_000_000)
                #expect(try await client.get("/api/v1/jobs/\(id)").json()["bytesReceived"] as? Int == answered)
                let seen = try await events.collect(timeout: 5) { event in
                    event.event == "job" && ((try? event.json()["state"] as? String) == "paused")
                }
                let pausedEvent = try #require(seen.last { $0.event == "job" })
                #expect(try pausedEvent.json()["bytesReceived"] as? Int == answered)
            }
        }
    }

    /// A resume the origin answers with the whole file (it ignores `Range`) restarts from zero, and the job's event
    /// says so with the reason.
    @Test func restartFromZeroSaysWhy() async throws {
        try await withFaultOrigin { origin in
            let size = 2 * 1024 * 1024
            let url = origin.url("/f/norange.bin?size=\(size)&seed=6&ignore_range=1&rate=524288&key=norange-\(UUID().uuidString)")
            try await withFerry { ferry in
                let client = ferry.client
                let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": url]).json()["id"] as? String)
                try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 200_000 }
                _ = try await client.request("POST", "/api/v1/jobs/\(id)/pause")
                let events = try await client.events("/api/v1/jobs/\(id)/events")
                _ = try await client.request("POST", "/api/v1/jobs/\(id)/resume")
                let seen = try await events.collect(timeout: 30) { event in
                    event.event == "job" && ((try? event.json()["state"] as? String) == "finished")
                }
                let restart = try #require(seen.first { $0.event == "job" && ((try? $0.json()["restarted"] as? Bool) == true) })
                let reason = try #require(try restart.json()["restartReason"] as? String)
                #expect(reason.contains("range"), "reason: \(reason)")
                let finished = try await client.get("/api/v1/jobs/\(id)").json()
                #expect(finished["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 6)))
            }
        }
    }

    @Test func followStreamsAFileWhileItDownloads() async throws {
        try await withNginx { nginx in
            let size = 1_500_000
            try Fixture.writeFile(at: nginx.root + "/follow.bin", size: size, seed: 5)
            try await withFerry { ferry in
                let id = try #require(try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/follow.bin?rate=524288")]).json()["id"] as? String)
                let response = try await ferry.client.request("GET", "/api/v1/jobs/\(id)/content?follow=true", timeout: 30)
                #expect(response.status == 200)
                #expect(response.body.count == size)
                #expect(Fixture.sha256Hex(of: response.body) == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 5)))
                // The stream ends with the last byte written; the job is finished once the file is moved (a moment later).
                let ended = try await ferry.client.waitForJob(id, timeout: 15) { ["finished", "failed"].contains($0["state"] as? String) }
                #expect(ended["state"] as? String == "finished")
            }
        }
    }
}
