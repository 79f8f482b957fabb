import FerryTestSupport
import Foundation
import Testing

/// Mirrors end to end (API.md, "Downloader options"): a real Ferry spreads a file's segments over the job's `url`
/// and its `mirrors`, all served by nginx (`/slow/<path>?rate=` serves the same file, with the same validators, at
/// a capped rate per connection), and drops a source that serves another version or fails.
@Suite("Mirrors")
struct MirrorTests {
    private static let size = 6_000_000

    /// Writes the file the tests fetch (and a different file of the same name under `other/`).
    private static func files(_ nginx: NginxOrigin, seed: Int) throws -> String {
        try Fixture.writeFile(at: nginx.root + "/m.bin", size: size, seed: seed)
        try FileManager.default.createDirectory(atPath: nginx.root + "/other", withIntermediateDirectories: true)
        try Fixture.writeFile(at: nginx.root + "/other/m.bin", size: size + 1000, seed: seed + 1)
        return Fixture.sha256Hex(of: Fixture.content(size: size, seed: seed))
    }

    private static func sources(_ job: [String: Any]) throws -> [[String: Any]] {
        try #require(job["sources"] as? [[String: Any]])
    }

    @Test func segmentsAreSpreadOverTheURLAndItsMirror() async throws {
        try await withNginx { nginx in
            let digest = try Self.files(nginx, seed: 61)
            try await withFerry { ferry in
                let main = nginx.url("/slow/m.bin?rate=1500000"), mirror = nginx.url("/slow/m.bin?rate=1500001")
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": main, "mirrors": [mirror], "connections": 1,
                ])
                #expect(created.status == 201)
                let id = try #require(try created.json()["id"] as? String)
                let sourcesAtStart = try Self.sources(try created.json())
                #expect(sourcesAtStart.map { $0["url"] as? String } == [main, mirror])
                #expect(sourcesAtStart.allSatisfy { $0["state"] as? String == "active" && $0["bytesReceived"] as? Int == 0 })

                let finished = try await ferry.client.waitForJob(id, timeout: 30) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == digest)
                let sources = try Self.sources(finished)
                #expect(sources.allSatisfy { $0["state"] as? String == "active" })
                let bytes = sources.compactMap { $0["bytesReceived"] as? Int }
                #expect(bytes.count == 2 && bytes.allSatisfy { $0 > 0 }, "\(bytes)")
                #expect(bytes.reduce(0, +) == Self.size)

                // nginx served parts of the file to both URLs; every request after the first asked a range with If-Range.
                let served = nginx.accessLog().filter { $0.path == "/slow/m.bin" }
                #expect(served.dropFirst().allSatisfy { $0.status == 206 && $0.ifRange != nil }, "\(served)")
                let targets = Set(served.map(\.target))
                #expect(targets.contains("/slow/m.bin?rate=1500000") && targets.contains("/slow/m.bin?rate=1500001"), "\(targets)")
            }
        }
    }

    @Test func aMirrorServingAnotherVersionIsDroppedAndNeverMixedIn() async throws {
        try await withNginx { nginx in
            let digest = try Self.files(nginx, seed: 62)
            try await withFerry { ferry in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/slow/m.bin?rate=3000000"), "mirrors": [nginx.url("/other/m.bin")], "connections": 2,
                ])
                let id = try #require(try created.json()["id"] as? String)
                let finished = try await ferry.client.waitForJob(id, timeout: 30) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == digest)
                let sources = try Self.sources(finished)
                #expect(sources[0]["state"] as? String == "active")
                #expect(sources[1]["state"] as? String == "dropped")
                let error = try #require(sources[1]["error"] as? [String: Any])
                #expect(error["code"] as? String == "source_mismatch", "\(error)")
                #expect(sources[0]["bytesReceived"] as? Int == Self.size)
                // Not one byte of the other version reached the file: the digest above says so, and so does the count.
                #expect(finished["bytesReceived"] as? Int == Self.size)
            }
        }
    }

    @Test func aFailingMainURLIsDroppedAndTheMirrorCarriesTheJob() async throws {
        try await withNginx { nginx in
            let digest = try Self.files(nginx, seed: 63)
            try await withFerry { ferry in
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/missing/m.bin"), "mirrors": [nginx.url("/m.bin"), nginx.url("/also-missing/m.bin")],
                ])
                let id = try #require(try created.json()["id"] as? String)
                let finished = try await ferry.client.waitForJob(id, timeout: 30) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == digest)
                #expect(finished["attempts"] as? Int == 1)
                let sources = try Self.sources(finished)
                #expect(sources.map { $0["state"] as? String } == ["dropped", "active", "active"]
                        || sources.map { $0["state"] as? String } == ["dropped", "active", "dropped"], "\(sources)")
                let error = try #require(sources[0]["error"] as? [String: Any])
                #expect(error["code"] as? String == "http_error")
                #expect(error["httpStatus"] as? Int == 404)

                // Dropped stays dropped across a restart: the sources are kept with the job.
                let again = try #require(try await ferry.client.get("/api/v1/jobs/\(id)").json()["sources"] as? [[String: Any]])
                #expect(again[0]["state"] as? String == "dropped")
            }
        }
    }

    @Test func droppedSourcesAreKeptAcrossARestart() async throws {
        try await withNginx { nginx in
            _ = try Self.files(nginx, seed: 64)
            let spool = try Fixture.tempDirectory("ferry-mirrors")
            defer { Fixture.removeTree(spool) }
            let first = try await RunningFerry.start(spool: spool)
            let id: String
            do {
                let created = try await first.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/missing/m.bin"), "mirrors": [nginx.url("/m.bin")],
                ])
                id = try #require(try created.json()["id"] as? String)
                _ = try await first.client.waitForJob(id, timeout: 30) { $0["state"] as? String == "finished" }
            } catch {
                await first.stop()
                throw error
            }
            await first.stop()
            let second = try await RunningFerry.start(spool: spool)
            do {
                let job = try await second.client.get("/api/v1/jobs/\(id)").json()
                let sources = try Self.sources(job)
                #expect(sources.map { $0["state"] as? String } == ["dropped", "active"])
                #expect((sources[0]["error"] as? [String: Any])?["httpStatus"] as? Int == 404)
                #expect(sources[1]["bytesReceived"] as? Int == Self.size)
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }

    @Test func mirrorsAreCheckedLikeTheURL() async throws {
        try await withFerry({ $0.allowPrivateNetworks = false }) { ferry in
            let refused = try await ferry.client.json("POST", "/api/v1/jobs", [
                "url": "http://example.com/a.bin", "mirrors": ["http://10.0.0.1/a.bin"],
            ])
            #expect(refused.status == 403)
            #expect((try refused.json()["error"] as? [String: Any])?["code"] as? String == "forbidden_destination")
            #expect(((try refused.json()["error"] as? [String: Any])?["message"] as? String ?? "").contains("mirrors[0]"))
            let invalid = try await ferry.client.json("POST", "/api/v1/jobs", [
                "url": "http://example.com/a.bin", "mirrors": ["http://example.net/a.bin", "gopher://example.org/a"],
            ])
            #expect(invalid.status == 400)
            #expect(((try invalid.json()["error"] as? [String: Any])?["message"] as? String ?? "").contains("mirrors[1]"))
            let repeated = try await ferry.client.json("POST", "/api/v1/jobs", [
                "url": "http://example.com/a.bin", "mirrors": ["HTTP://EXAMPLE.COM:80/a.bin"],
            ])
            #expect(repeated.status == 400)
            let many = try await ferry.client.json("POST", "/api/v1/jobs", [
                "url": "http://example.com/a.bin", "mirrors": (0..<16).map { "http://m\($0).example.com/a.bin" },
            ])
            #expect(many.status == 400)
            let ftp = try await ferry.client.json("POST", "/api/v1/jobs", [
                "url": "ftp://example.com/a.bin", "mirrors": ["http://example.net/a.bin"],
            ])
            #expect(ftp.status == 400)
            let plain = try await ferry.client.json("POST", "/api/v1/jobs", ["url": "http://example.com/b.bin", "paused": true])
            #expect(plain.status == 201)
            #expect(try plain.json()["sources"] is NSNull)
        }
    }
}
