import FerryTestSupport
import Foundation
import Testing

/// `checksum` of each algorithm (API.md, "Downloader options") against a real nginx: computed while the bytes
/// stream in, a right value finishes, a wrong one fails with `checksum_mismatch` keeping `bytesReceived`; refused at
/// submit when malformed; still right for a download resumed after the process was killed.
@Suite("Checksums, end to end", .serialized)
struct ChecksumTests {
    static let algorithms = ["sha-256", "sha-512", "sha-1", "md5"]

    @Test func eachAlgorithmFinishesWhenRightAndFailsWhenWrong() async throws {
        try await withNginx { nginx in
            let size = 3 * 1024 * 1024 + 5
            try Fixture.writeFile(at: nginx.root + "/sum.bin", size: size, seed: 31)
            let sha256 = try await Fixture.digestHex(ofFile: nginx.root + "/sum.bin", algorithm: "sha-256")
            try await withFerry { ferry in
                for (index, algorithm) in Self.algorithms.enumerated() {
                    let value = try await Fixture.digestHex(ofFile: nginx.root + "/sum.bin", algorithm: algorithm)
                    // One connection, then segments written out of order (hashed as the prefix grows).
                    let connections = index % 2 == 0 ? 1 : 4
                    let right = try await ferry.client.json("POST", "/api/v1/jobs", [
                        "url": nginx.url("/sum.bin?right=\(algorithm)"), "connections": connections,
                        "checksum": ["algorithm": algorithm, "value": value.uppercased()],
                    ])
                    #expect(right.status == 201, "\(algorithm): \(right)")
                    let created = try right.json()
                    #expect(created["checksum"] as? [String: String] == ["algorithm": algorithm, "value": value])
                    #expect(created["expectedSha256"] as? String == (algorithm == "sha-256" ? value : nil))
                    let id = try #require(created["id"] as? String)
                    let finished = try await ferry.client.waitForJob(id) { ["finished", "failed"].contains($0["state"] as? String) }
                    #expect(finished["state"] as? String == "finished", "\(algorithm): \(finished)")
                    #expect(finished["sha256"] as? String == sha256, "the job's sha256 is always given")

                    let wrongValue = String(repeating: "0", count: value.count)
                    let wrong = try await ferry.client.json("POST", "/api/v1/jobs", [
                        "url": nginx.url("/sum.bin?wrong=\(algorithm)"), "connections": connections,
                        "checksum": ["algorithm": algorithm, "value": wrongValue],
                    ])
                    let wrongID = try #require(try wrong.json()["id"] as? String, "\(wrong)")
                    let failed = try await ferry.client.waitForJob(wrongID) { ["finished", "failed"].contains($0["state"] as? String) }
                    let error = failed["error"] as? [String: Any]
                    #expect(failed["state"] as? String == "failed", "\(algorithm): \(failed)")
                    #expect(error?["code"] as? String == "checksum_mismatch")
                    #expect((error?["message"] as? String)?.contains(value) == true, "the message gives the actual \(algorithm)")
                    #expect(failed["bytesReceived"] as? Int == size)
                    #expect(failed["sha256"] is NSNull)
                    #expect(!FileManager.default.fileExists(atPath: ferry.spool + "/partial/\(wrongID).part"))
                }
            }
        }
    }

    @Test func malformedChecksumsAreRefusedAtSubmit() async throws {
        try await withFerry { ferry in
            let url = "http://origin.invalid/f.bin"
            func refusal(_ body: [String: Any]) async throws -> (status: Int, code: String?, message: String) {
                let response = try await ferry.client.json("POST", "/api/v1/jobs", body.merging(["url": url]) { a, _ in a })
                let error = try response.json()["error"] as? [String: Any]
                return (response.status, error?["code"] as? String, error?["message"] as? String ?? "")
            }
            let cases: [([String: Any], String)] = [
                (["checksum": ["algorithm": "sha-384", "value": String(repeating: "0", count: 96)]], "sha-384"),
                (["checksum": ["algorithm": "sha-512", "value": String(repeating: "0", count: 64)]], "128"),
                (["checksum": ["algorithm": "md5", "value": String(repeating: "x", count: 32)]], "hexadecimal"),
                (["checksum": ["value": String(repeating: "0", count: 32)]], "checksum.algorithm"),
                (["checksum": ["algorithm": "md5"]], "checksum.value"),
                (["checksum": "md5:" + String(repeating: "0", count: 32)], "'checksum'"),
                (["sha256": String(repeating: "a", count: 64), "checksum": ["algorithm": "sha-256", "value": String(repeating: "b", count: 64)]], "sha256"),
                (["sha256": String(repeating: "a", count: 64), "checksum": ["algorithm": "md5", "value": String(repeating: "b", count: 32)]], "give one"),
            ]
            for (body, words) in cases {
                let answer = try await refusal(body)
                #expect(answer.status == 400 && answer.code == "invalid_request", "\(body): \(answer)")
                #expect(answer.message.contains(words), "\(body): \(answer.message)")
            }
            // In a batch, the bad item alone is refused.
            let batch = try await ferry.client.json("POST", "/api/v1/jobs", [
                ["url": url, "paused": true, "checksum": ["algorithm": "sha-1", "value": String(repeating: "0", count: 41)]],
                ["url": url + "?2", "paused": true, "checksum": ["algorithm": "sha-1", "value": String(repeating: "0", count: 40)]],
            ])
            let items = try batch.jsonArray()
            #expect(((items.first?["error"] as? [String: Any])?["code"] as? String) == "invalid_request", "\(items)")
            #expect(items.last?["checksum"] as? [String: String] == ["algorithm": "sha-1", "value": String(repeating: "0", count: 40)])
            #expect(try await ferry.client.get("/api/v1/jobs").json()["jobs"].map { ($0 as? [Any])?.count } == 1)
        }
    }

    /// SIGKILL mid-download, then a new start: the job continues with a Range request, its SHA-512 computed over
    /// the bytes already on disk and the rest, and finishes (a digest of the new bytes only would fail it).
    @Test func aResumedDownloadAfterAKillStillMatchesItsChecksum() async throws {
        try await withNginx { nginx in
            let size = 5 * 1024 * 1024
            try Fixture.writeFile(at: nginx.root + "/kill.bin", size: size, seed: 32)
            let sha512 = try await Fixture.digestHex(ofFile: nginx.root + "/kill.bin", algorithm: "sha-512")
            let spool = try Fixture.tempDirectory("ferry-checksum-restart")
            defer { Fixture.removeTree(spool) }
            let port = try RestartTests.freePort()
            var ferry = try await RestartTests.launch(port: port, spool: spool)
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)
            let created = try await client.json("POST", "/api/v1/jobs", [
                "url": nginx.url("/slow/kill.bin?rate=1048576"), "connections": 1,
                "checksum": ["algorithm": "sha-512", "value": sha512],
            ])
            let id = try #require(try created.json()["id"] as? String, "\(created)")
            try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 1_500_000 }
            ferry.terminate(signal: SIGKILL)
            #expect(await ferry.exit(within: 5) != nil)

            ferry = try await RestartTests.launch(port: port, spool: spool)
            let ended = try await ChildFerry.diagnosed(ferry) {
                let reopened = try await client.get("/api/v1/jobs/\(id)").json()
                #expect(reopened["checksum"] as? [String: String] == ["algorithm": "sha-512", "value": sha512], "kept in the store")
                return try await client.waitForJob(id, timeout: 40) { ["finished", "failed"].contains($0["state"] as? String) }
            }
            #expect(ended["state"] as? String == "finished", "\(ended)")
            #expect(ended["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 32)))
            let resumed = nginx.accessLog().filter { $0.path.hasPrefix("/slow/kill.bin") && $0.status == 206 }
            #expect(!resumed.isEmpty, "the download continued with a Range request")
        }
    }
}
