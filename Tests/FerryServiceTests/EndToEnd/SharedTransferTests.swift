import FerryTestSupport
import Foundation
import Testing

/// Dedupe shares bytes, never drops intent (API.md, POST /api/v1/jobs): a request for a URL a live job fetches gets
/// that job (`200`) only when it asks nothing more; otherwise a job of its own (`201`) that shares the transfer or
/// the finished file, with its own delivery, checksum and filename. A real Ferry against a real nginx.
@Suite("Shared transfers")
struct SharedTransferTests {
    /// GETs of `path` nginx answered (the origin fetched).
    static func fetches(_ nginx: NginxOrigin, _ path: String) -> Int {
        nginx.accessLog().filter { $0.method == "GET" && $0.path == path }.count
    }

    static func finished(_ ferry: RunningFerry, _ body: [String: Any], status: Int = 201) async throws -> [String: Any] {
        let created = try await ferry.client.json("POST", "/api/v1/jobs", body)
        #expect(created.status == status, "\(created.text)")
        let id = try #require(try created.json()["id"] as? String)
        return try await ferry.client.waitForJob(id) { $0["state"] as? String == "finished" }
    }

    static func run(_ body: (NginxOrigin, RunningFerry) async throws -> Void) async throws {
        try await withNginx { nginx in
            let ferry = try await RunningFerry.start()
            do { try await body(nginx, ferry) } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
        }
    }

    @Test func anIdenticalRequestGetsTheSameJobBack() async throws {
        try await Self.run { nginx, ferry in
            try Fixture.writeFile(at: nginx.root + "/same.bin", size: 100_000, seed: 71)
            let digest = Fixture.sha256Hex(of: Fixture.content(size: 100_000, seed: 71))
            let first = try await Self.finished(ferry, ["url": nginx.url("/same.bin"), "tags": ["a", "b"]])
            let id = try #require(first["id"] as? String)
            for body: [String: Any] in [
                ["url": nginx.url("/same.bin")],
                ["url": nginx.url("/same.bin"), "tags": ["b"], "priority": 5],
                // The digest the file has: nothing more to check.
                ["url": nginx.url("/same.bin"), "sha256": digest],
            ] {
                let again = try await ferry.client.json("POST", "/api/v1/jobs", body)
                #expect(again.status == 200, "\(body)")
                #expect(try again.json()["id"] as? String == id)
            }
            #expect((try await ferry.client.get("/api/v1/jobs").json()["jobs"] as? [Any])?.count == 1)
        }
    }

    @Test func aRequestWithADeliveryGetsItsOwnJobAndTheFileIsDeliveredWithoutASecondDownload() async throws {
        try await Self.run { nginx, ferry in
            let size = 300_000
            try Fixture.writeFile(at: nginx.root + "/d.bin", size: size, seed: 72)
            let digest = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 72))
            let first = try await Self.finished(ferry, ["url": nginx.url("/d.bin")])
            let body: [String: Any] = ["url": nginx.url("/d.bin"), "deliver": ["url": nginx.url("/upload/shared/d.bin")]]
            let second = try await Self.finished(ferry, body)
            #expect(second["id"] as? String != first["id"] as? String)
            #expect((second["delivery"] as? [String: Any])?["state"] as? String == "delivered")
            #expect(second["sha256"] as? String == digest)
            let uploaded = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/upload/shared/d.bin"))
            #expect(Fixture.sha256Hex(of: Array(uploaded)) == digest)
            #expect(Self.fetches(nginx, "/d.bin") == 1, "one download for both jobs")
            // The same request again: that job does it all already.
            let third = try await ferry.client.json("POST", "/api/v1/jobs", body)
            #expect(third.status == 200)
            #expect(try third.json()["id"] as? String == second["id"] as? String)
        }
    }

    @Test func aWrongChecksumFailsOnlyTheNewJob() async throws {
        try await Self.run { nginx, ferry in
            try Fixture.writeFile(at: nginx.root + "/c.bin", size: 200_000, seed: 73)
            let first = try await Self.finished(ferry, ["url": nginx.url("/c.bin")])
            let firstID = try #require(first["id"] as? String)
            for checksum: [String: Any] in [
                ["sha256": String(repeating: "0", count: 64)],
                ["checksum": ["algorithm": "md5", "value": String(repeating: "0", count: 32)]],
            ] {
                let created = try await ferry.client.json("POST", "/api/v1/jobs", checksum.merging(["url": nginx.url("/c.bin")]) { a, _ in a })
                #expect(created.status == 201)
                let id = try #require(try created.json()["id"] as? String)
                let failed = try await ferry.client.waitForJob(id) { $0["state"] as? String == "failed" }
                #expect((failed["error"] as? [String: Any])?["code"] as? String == "checksum_mismatch", "\(failed)")
                #expect(try await ferry.client.get("/api/v1/jobs/\(id)/content").status == 409)
            }
            #expect(try await ferry.client.get("/api/v1/jobs/\(firstID)").json()["state"] as? String == "finished")
            #expect(try await ferry.client.get("/api/v1/jobs/\(firstID)/content").body.count == 200_000)
            // A right MD5 (another algorithm than the SHA-256 known) is checked against the shared file and passes.
            let md5 = try await Fixture.digestHex(ofFile: nginx.root + "/c.bin", algorithm: "md5")
            let right = try await Self.finished(ferry, ["url": nginx.url("/c.bin"), "checksum": ["algorithm": "md5", "value": md5]])
            #expect(right["id"] as? String != firstID)
            #expect(Self.fetches(nginx, "/c.bin") == 1)
        }
    }

    @Test func anotherFilenameWhileTheFirstDownloadsServesBothFilesFromOneDownload() async throws {
        try await Self.run { nginx, ferry in
            let size = 1_500_000
            try Fixture.writeFile(at: nginx.root + "/f.bin", size: size, seed: 74)
            let expected = Fixture.content(size: size, seed: 74)
            let url = nginx.url("/slow/f.bin?rate=600000")
            let first = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
            let firstID = try #require(try first.json()["id"] as? String)
            _ = try await ferry.client.waitForJob(firstID) { $0["state"] as? String == "downloading" }
            let second = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url, "filename": "copy.bin"])
            #expect(second.status == 201)
            let secondID = try #require(try second.json()["id"] as? String)
            let a = try await ferry.client.waitForJob(firstID) { $0["state"] as? String == "finished" }
            let b = try await ferry.client.waitForJob(secondID) { $0["state"] as? String == "finished" }
            #expect(a["filename"] as? String == "f.bin")
            #expect(b["filename"] as? String == "copy.bin")
            #expect(b["sha256"] as? String == a["sha256"] as? String)
            for id in [firstID, secondID] {
                let content = try await ferry.client.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 200)
                #expect(content.body == expected)
            }
            let disposition = try await ferry.client.get("/api/v1/jobs/\(secondID)/content").header("Content-Disposition")
            #expect(disposition?.contains("copy.bin") == true)
            #expect(Self.fetches(nginx, "/slow/f.bin") == 1, "one download for both jobs")
        }
    }

    @Test func deletingOrCancellingOneJobLeavesTheOtherItsBytes() async throws {
        try await Self.run { nginx, ferry in
            try Fixture.writeFile(at: nginx.root + "/x.bin", size: 150_000, seed: 75)
            let expected = Fixture.content(size: 150_000, seed: 75)
            let first = try await Self.finished(ferry, ["url": nginx.url("/x.bin")])
            let second = try await Self.finished(ferry, ["url": nginx.url("/x.bin"), "filename": "other.bin"])
            let firstID = try #require(first["id"] as? String), secondID = try #require(second["id"] as? String)
            #expect(try await ferry.client.request("DELETE", "/api/v1/jobs/\(firstID)").status == 204)
            #expect(try await ferry.client.get("/api/v1/jobs/\(secondID)/content").body == expected)
            // The other way round: a job sharing the file deleted, the one it shared with keeps its bytes.
            let third = try await Self.finished(ferry, ["url": nginx.url("/x.bin"), "filename": "third.bin"])
            #expect(try await ferry.client.request("DELETE", "/api/v1/jobs/\(try #require(third["id"] as? String))").status == 204)
            #expect(try await ferry.client.get("/api/v1/jobs/\(secondID)/content").body == expected)
            #expect(Self.fetches(nginx, "/x.bin") == 1)
            // The leader of a running transfer cancelled: its follower gets a transfer of its own and finishes.
            try Fixture.writeFile(at: nginx.root + "/y.bin", size: 1_200_000, seed: 76)
            let url = nginx.url("/slow/y.bin?rate=200000")
            let leader = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
            let leaderID = try #require(try leader.json()["id"] as? String)
            _ = try await ferry.client.waitForJob(leaderID) { $0["state"] as? String == "downloading" }
            let follower = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url, "tags": ["mine"]])
            #expect(follower.status == 201)
            let followerID = try #require(try follower.json()["id"] as? String)
            #expect(try await ferry.client.request("POST", "/api/v1/jobs/\(leaderID)/cancel").status == 200)
            let done = try await ferry.client.waitForJob(followerID) { $0["state"] as? String == "finished" }
            #expect(done["tags"] as? [String] == ["mine"])
            #expect(try await ferry.client.get("/api/v1/jobs/\(followerID)/content").body == Fixture.content(size: 1_200_000, seed: 76))
            #expect(try await ferry.client.get("/api/v1/jobs/\(leaderID)").json()["state"] as? String == "cancelled")
        }
    }

    @Test func aFollowerComesBackAfterARestart() async throws {
        try await withNginx { nginx in
            let spool = try Fixture.tempDirectory("ferry-shared")
            defer { Fixture.removeTree(spool) }
            try Fixture.writeFile(at: nginx.root + "/r.bin", size: 1_200_000, seed: 77)
            let url = nginx.url("/slow/r.bin?rate=200000")
            let ferry = try await RunningFerry.start(spool: spool)
            let leaderID: String, followerID: String
            do {
                let leader = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
                leaderID = try #require(try leader.json()["id"] as? String)
                _ = try await ferry.client.waitForJob(leaderID) { $0["state"] as? String == "downloading" }
                let follower = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": url, "deliver": ["url": nginx.url("/upload/restart/r.bin")],
                ])
                #expect(follower.status == 201)
                followerID = try #require(try follower.json()["id"] as? String)
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
            let again = try await RunningFerry.start(spool: spool)
            do {
                let done = try await again.client.waitForJob(followerID) { $0["state"] as? String == "finished" }
                #expect((done["delivery"] as? [String: Any])?["state"] as? String == "delivered")
                _ = try await again.client.waitForJob(leaderID) { $0["state"] as? String == "finished" }
                let expected = Fixture.content(size: 1_200_000, seed: 77)
                #expect(try await again.client.get("/api/v1/jobs/\(followerID)/content").body == expected)
                let uploaded = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/upload/restart/r.bin"))
                #expect(Array(uploaded) == expected)
                // The leader's download, resumed with a range request; the follower made none of its own.
                let fetches = nginx.accessLog().filter { $0.path == "/slow/r.bin" }
                #expect(fetches.filter { $0.range == nil }.count == 1, "\(fetches)")
            } catch {
                await again.stop()
                throw error
            }
            await again.stop()
        }
    }
}
