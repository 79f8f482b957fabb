import FerryTestSupport
import Foundation
import Testing

/// Submit → events → finished → content, through the HTTP API against a real nginx.
@Suite("Job lifecycle, end to end", .serialized)
struct JobLifecycleTests {
    /// A checksum failure keeps the count of bytes received (the page shows them), though the file is gone.
    @Test func checksumFailureShowsWhatWasReceived() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/sum.bin", size: 300_000, seed: 8)
            try await withFerry { ferry in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/sum.bin"), "sha256": String(repeating: "0", count: 64)])
                let id = try #require(try created.json()["id"] as? String)
                let failed = try await ferry.client.waitForJob(id) { $0["state"] as? String == "failed" }
                #expect((failed["error"] as? [String: Any])?["code"] as? String == "checksum_mismatch")
                #expect(failed["bytesReceived"] as? Int == 300_000)
                #expect(!FileManager.default.fileExists(atPath: ferry.spool + "/partial/\(id).part"))
            }
        }
    }

    @Test func submittedJobFinishesWithRightBytesAndServesRanges() async throws {
        try await withNginx { nginx in
            let size = 3 * 1024 * 1024 + 17
            try Fixture.writeFile(at: nginx.root + "/data.bin", size: size, seed: 7)
            let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 7))
            try await withFerry { ferry in
                let client = ferry.client
                let created = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/data.bin"), "sha256": expected])
                #expect(created.status == 201)
                let job = try created.json()
                let id = try #require(job["id"] as? String)
                #expect(created.header("Location") == "/api/v1/jobs/\(id)")
                #expect(job["state"] as? String == "waiting" || job["state"] as? String == "downloading")
                #expect(job["contentUrl"] as? String == "/api/v1/jobs/\(id)/content")
                #expect(job.keys.contains("bytesExpected") && job.keys.contains("eta"))  // null fields are present

                let finished = try await client.waitForJob(id) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == expected)
                #expect(finished["bytesReceived"] as? Int == size)
                #expect(finished["bytesExpected"] as? Int == size)
                #expect(finished["progress"] as? Double == 1)
                #expect(finished["filename"] as? String == "data.bin")
                #expect(finished["finishedAt"] is String)

                let content = try await client.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 200)
                #expect(content.body.count == size)
                #expect(Fixture.sha256Hex(of: content.body) == expected)
                #expect(content.header("Accept-Ranges") == "bytes")
                let etag = try #require(content.header("ETag"))
                #expect(!etag.hasPrefix("W/"))
                #expect(content.header("Content-Disposition")?.contains("filename*=UTF-8''data.bin") == true)
                let digest = Data(Fixture.content(size: size, seed: 7)).sha256Base64ForTest
                #expect(content.header("Repr-Digest") == "sha-256=:\(digest):")

                let range = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=100-199"])
                #expect(range.status == 206)
                #expect(range.header("Content-Range") == "bytes 100-199/\(size)")
                #expect(range.body == Array(Fixture.content(size: size, seed: 7)[100...199]))

                let suffix = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=-10"])
                #expect(suffix.status == 206 && suffix.body == Array(Fixture.content(size: size, seed: 7).suffix(10)))

                let multi = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=0-9,20-29"])
                #expect(multi.status == 206)
                #expect(multi.header("Content-Type")?.hasPrefix("multipart/byteranges; boundary=") == true)
                #expect(multi.text.contains("Content-Range: bytes 0-9/\(size)"))
                #expect(multi.text.contains("Content-Range: bytes 20-29/\(size)"))

                let outside = try await client.get("/api/v1/jobs/\(id)/content", headers: ["Range": "bytes=\(size + 10)-"])
                #expect(outside.status == 416)
                #expect(outside.header("Content-Range") == "bytes */\(size)")

                let notModified = try await client.get("/api/v1/jobs/\(id)/content", headers: ["If-None-Match": etag])
                #expect(notModified.status == 304 && notModified.body.isEmpty)

                let staleIfRange = try await client.get("/api/v1/jobs/\(id)/content",
                                                  headers: ["Range": "bytes=0-9", "If-Range": "\"not-it\""])
                #expect(staleIfRange.status == 200 && staleIfRange.body.count == size)
                let freshIfRange = try await client.get("/api/v1/jobs/\(id)/content",
                                                  headers: ["Range": "bytes=0-9", "If-Range": etag])
                #expect(freshIfRange.status == 206 && freshIfRange.body.count == 10)

                let head = try await client.request("HEAD", "/api/v1/jobs/\(id)/content")
                #expect(head.status == 200 && head.header("Content-Length") == String(size) && head.body.isEmpty)

                // The file lives in the spool's finished area, and the spool is tagged for backup tools.
                #expect(FileManager.default.fileExists(atPath: ferry.spool + "/files/data.bin"))
                let tag = try String(contentsOfFile: ferry.spool + "/CACHEDIR.TAG", encoding: .utf8)
                #expect(tag.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55"))
            }
        }
    }

    @Test func contentOfAnUnfinishedJobIsAConflict() async throws {
        try await withFerry { ferry in
            let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/never", "paused": true])
            let id = try #require(try created.json()["id"] as? String)
            #expect(try created.json()["state"] as? String == "paused")
            let content = try await ferry.client.get("/api/v1/jobs/\(id)/content")
            #expect(content.status == 409)
            #expect(try content.json()["error"].flatMap { $0 as? [String: Any] }?["code"] as? String == "conflict")
        }
    }

    @Test func failedOriginAnswerFailsTheJobWithTheStatus() async throws {
        try await withNginx { nginx in
            try await withFerry { ferry in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/missing.bin")])
                let id = try #require(try created.json()["id"] as? String)
                let failed = try await ferry.client.waitForJob(id) { $0["state"] as? String == "failed" }
                let error = try #require(failed["error"] as? [String: Any])
                #expect(error["code"] as? String == "http_error")
                #expect(error["httpStatus"] as? Int == 404)
                #expect(try await ferry.client.get("/api/v1/jobs/\(id)/content").status == 409)
                let files = try FileManager.default.contentsOfDirectory(atPath: ferry.spool + "/files")
                #expect(files.isEmpty)
            }
        }
    }

    @Test func batchOf200SmallFilesAllFinish() async throws {
        try await withNginx { nginx in
            for index in 0..<200 {
                try Fixture.writeFile(at: nginx.root + "/f\(index).bin", size: 4096 + index, seed: index)
            }
            try await withFerry({ $0.maxConcurrent = 16 }) { ferry in
                var items: [[String: Any]] = (0..<200).map { ["url": nginx.url("/f\($0).bin")] }
                items.append(["url": "gopher://example.org/x"])  // one bad item does not spoil the batch
                let response = try await ferry.client.json("POST", "/api/v1/jobs", items)
                #expect(response.status == 200)
                let answers = try response.jsonArray()
                #expect(answers.count == 201)
                let bad = try #require(answers.last?["error"] as? [String: Any])
                #expect(bad["code"] as? String == "unsupported_scheme")
                let ids = answers.dropLast().compactMap { $0["id"] as? String }
                #expect(ids.count == 200)
                let deadline = Date().addingTimeInterval(60)
                var finished = 0
                while Date() < deadline {
                    let list = try await ferry.client.get("/api/v1/jobs?state=finished&limit=1000").json()
                    finished = (list["jobs"] as? [[String: Any]])?.count ?? 0
                    if finished == 200 { break }
                    try await Task.sleep(nanoseconds: 100_000_000)
                }
                #expect(finished == 200)
                for (index, id) in ids.enumerated() where index % 37 == 0 {
                    let body = try await ferry.client.get("/api/v1/jobs/\(id)/content").body
                    #expect(Fixture.sha256Hex(of: body) == Fixture.sha256Hex(of: Fixture.content(size: 4096 + index, seed: index)))
                }
            }
        }
    }

    @Test func listPagesWithCursorsAndFiltersByState() async throws {
        try await withFerry { ferry in
            var ids: [String] = []
            for index in 0..<5 {
                let response = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/\(index)", "paused": true])
                ids.append(try #require(try response.json()["id"] as? String))
            }
            let first = try await ferry.client.get("/api/v1/jobs?limit=2")
            #expect(first.status == 200)
            #expect(Int(first.header("Ferry-Event-Id") ?? "") != nil)
            let firstPage = try first.json()
            #expect((firstPage["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == Array(ids[0..<2]))
            let cursor = try #require(firstPage["next"] as? String)
            let second = try await ferry.client.get("/api/v1/jobs?limit=2&after=\(cursor)").json()
            #expect((second["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == Array(ids[2..<4]))
            let cursor2 = try #require(second["next"] as? String)
            let third = try await ferry.client.get("/api/v1/jobs?limit=2&after=\(cursor2)").json()
            #expect((third["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [ids[4]])
            #expect(third["next"] is NSNull)
            #expect(try await ferry.client.get("/api/v1/jobs?state=downloading").json()["jobs"].flatMap { $0 as? [Any] }?.isEmpty == true)
            #expect(try await ferry.client.get("/api/v1/jobs?state=bogus").status == 400)
            #expect(try await ferry.client.get("/api/v1/jobs?after=garbage").status == 400)
            #expect(try await ferry.client.get("/api/v1/jobs?limit=0").status == 400)
        }
    }

    @Test func actionsFollowTheStateTable() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/x", "paused": true]).json()["id"] as? String)
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/pause").status == 200)  // no-op on paused
            let cancelled = try await client.request("POST", "/api/v1/jobs/\(id)/cancel")
            #expect(cancelled.status == 200)
            #expect(try cancelled.json()["state"] as? String == "cancelled")
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/cancel").status == 200)  // no-op
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/pause").status == 409)
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/resume").status == 409)
            #expect(try await client.json("PATCH", "/api/v1/jobs/\(id)", ["priority": 5]).status == 409)
            #expect(try await client.request("DELETE", "/api/v1/jobs/\(id)").status == 204)
            #expect(try await client.get("/api/v1/jobs/\(id)").status == 404)
            #expect(try await client.request("POST", "/api/v1/jobs/nope/pause").status == 404)
            let wrongMethod = try await client.request("PUT", "/api/v1/jobs/\(id)")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("Allow")?.contains("PATCH") == true)
        }
    }

    @Test func patchChangesPriorityAndRateAndURL() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/a", "paused": true]).json()["id"] as? String)
            let patched = try await client.json("PATCH", "/api/v1/jobs/\(id)", ["priority": 7, "maxBytesPerSecond": 1000, "url": "http://127.0.0.1:9/b"])
            #expect(patched.status == 200)
            let job = try patched.json()
            #expect(job["priority"] as? Int == 7)
            #expect(job["maxBytesPerSecond"] as? Int == 1000)
            #expect(job["url"] as? String == "http://127.0.0.1:9/b")
            let cleared = try await client.request("PATCH", "/api/v1/jobs/\(id)", body: Array(#"{"maxBytesPerSecond":null}"#.utf8))
            #expect(try cleared.json()["maxBytesPerSecond"] is NSNull)
            #expect(try await client.json("PATCH", "/api/v1/jobs/\(id)", [:] as [String: Any]).status == 400)
            #expect(try await client.json("PATCH", "/api/v1/jobs/\(id)", ["url": "gopher://x"]).status == 400)
        }
    }
}

extension Data {
    /// Base64 of the SHA-256 of these bytes (via the fixtures' digest).
    var sha256BasedHex: String { Fixture.sha256Hex(of: Array(self)) }

    var sha256Base64ForTest: String {
        let hex = Array(sha256BasedHex.utf8)
        var bytes: [UInt8] = []
        var index = 0
        func nibble(_ c: UInt8) -> UInt8 { c <= 57 ? c - 48 : c - 87 }
        while index < hex.count { bytes.append(nibble(hex[index]) << 4 | nibble(hex[index + 1])); index += 2 }
        return Data(bytes).base64EncodedString()
    }
}
