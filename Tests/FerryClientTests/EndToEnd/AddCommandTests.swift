import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry add`: single and batch submissions, options, `--json`, and `--wait`'s exit status.
    @Suite("ferry add")
    struct AddCommandTests {
        @Test func addWaitFollowsTheJobToTheEndAndExitsZero() async throws {
            try await withOriginAndFerry { origin, ferry in
                let expected = try originFile(origin, "three.bin", size: 3_000_000, seed: 1)
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run(["add", origin.url("/slow/three.bin?rate=1500000"), "--wait"])
                #expect(result.status == 0, "\(result)")
                let id = try #require(result.lines.first)
                // Not a terminal: one plain line per change, ending with the finished job.
                #expect(result.lines.dropFirst().allSatisfy { $0.hasPrefix(id + "  ") }, "\(result)")
                #expect(result.lines.last?.hasPrefix("\(id)  finished  100%") == true, "\(result)")
                #expect(result.lines.contains { $0.contains("  downloading  ") }, "\(result)")
                let job = try await cli.job(id)
                #expect(job["state"] as? String == "finished")
                #expect(job["sha256"] as? String == expected)
                let filename = try #require(job["filename"] as? String)
                #expect(try Fixture.sha256Hex(ofFile: ferry.finishedFile(filename)) == expected)
            }
        }

        @Test func addWaitOfAMissingFileExitsNonZeroWithTheReason() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run(["add", origin.url("/nothing-here.bin"), "--wait"])
                #expect(result.status == 1, "\(result)")
                let id = try #require(result.lines.first)
                #expect(result.lines.last?.hasPrefix("\(id)  failed") == true, "\(result)")
                #expect(result.stderr.contains("http_error"), "\(result)")
                #expect(try await cli.job(id)["state"] as? String == "failed")
            }
        }

        @Test func batchAddWaitWithJSONPrintsTheFinalJobs() async throws {
            try await withOriginAndFerry { origin, ferry in
                let first = try originFile(origin, "one.bin", size: 400_000, seed: 2)
                let second = try originFile(origin, "two.bin", size: 900_000, seed: 3)
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run([
                    "add", origin.url("/one.bin"), origin.url("/slow/two.bin?rate=600000"), "--wait", "--json",
                ])
                #expect(result.status == 0, "\(result)")
                let jobs = try #require(try result.json() as? [[String: Any]], "\(result)")
                #expect(jobs.count == 2)
                #expect(jobs.map { $0["state"] as? String } == ["finished", "finished"])
                #expect(jobs.map { $0["sha256"] as? String } == [first, second])
            }
        }

        @Test func addMapsEveryOptionIntoTheRequest() async throws {
            try await withOriginAndFerry { origin, ferry in
                let digest = try originFile(origin, "opts.bin", size: 100_000, seed: 4)
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run([
                    "add", origin.url("/opts.bin"), "--filename", "renamed.bin", "--sha256", digest.uppercased(),
                    "--priority", "7", "--connections", "2", "--paused", "-H", "X-Ferry-Test: yes", "--json",
                ])
                #expect(result.status == 0, "\(result)")
                let job = try result.jsonObject()
                #expect(job["state"] as? String == "paused")
                #expect(job["filename"] as? String == "renamed.bin")
                #expect(job["expectedSha256"] as? String == digest)
                #expect(job["priority"] as? Int == 7)
                #expect(job["connections"] as? Int == 2)
                let id = try #require(job["id"] as? String)
                // Paused at creation: the origin has not been asked for anything.
                #expect(origin.accessLog().isEmpty)
                let resumed = try await cli.run(["resume", id])
                #expect(resumed.status == 0, "\(resumed)")
                let finished = try await cli.waitForJob(id) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == digest)
                #expect(try Fixture.sha256Hex(ofFile: ferry.finishedFile("renamed.bin")) == digest)
            }
        }

        /// `--checksum ALGORITHM:HEX` reaches the job: a right SHA-512 finishes and `ferry show` names it; a wrong
        /// MD5 fails the job with checksum_mismatch and `add --wait` exits 1 naming it.
        @Test func addChecksumOfAnotherAlgorithmIsCheckedByTheServer() async throws {
            try await withOriginAndFerry { origin, ferry in
                _ = try originFile(origin, "sum.bin", size: 300_000, seed: 9)
                let sha512 = try await Fixture.digestHex(ofFile: origin.root + "/sum.bin", algorithm: "sha-512")
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run(["add", origin.url("/sum.bin"), "--checksum", "sha-512:" + sha512.uppercased(), "--wait", "--json"])
                #expect(result.status == 0, "\(result)")
                let answer = try result.json()
                let job = try #require((answer as? [[String: Any]])?.first ?? answer as? [String: Any], "\(result)")
                #expect(job["state"] as? String == "finished")
                #expect(job["checksum"] as? [String: String] == ["algorithm": "sha-512", "value": sha512])
                let id = try #require(job["id"] as? String)
                let shown = try await cli.run(["show", id])
                #expect(shown.status == 0 && shown.stdout.contains("sha-512:" + sha512), "\(shown)")

                let wrong = try await cli.run(["add", origin.url("/sum.bin?again"), "--checksum", "md5:" + String(repeating: "0", count: 32), "--wait"])
                #expect(wrong.status == 1, "\(wrong)")
                #expect(wrong.stderr.contains("checksum_mismatch"), "\(wrong)")
            }
        }

        @Test func maxSpeedAndConnectionsReachTheJob() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run([
                    "add", origin.url("/limited.bin"), "--max-speed", "5MiB", "--connections", "8", "--paused", "--json",
                ])
                #expect(result.status == 0, "\(result)")
                let job = try result.jsonObject()
                #expect(job["maxBytesPerSecond"] as? Int == 5 * 1024 * 1024, "\(job)")
                #expect(job["connections"] as? Int == 8, "\(job)")
                let decimal = try await cli.run(["add", origin.url("/decimal.bin"), "--max-speed", "500K", "--paused", "--json"])
                #expect(try decimal.jsonObject()["maxBytesPerSecond"] as? Int == 500_000, "\(decimal)")
            }
        }

        @Test func aRefusedItemOfABatchIsReportedAndMakesTheExitStatusNonZero() async throws {
            try await withOriginAndFerry { origin, ferry in
                _ = try originFile(origin, "ok.bin", size: 10_000, seed: 5)
                let cli = FerryCLI(ferry: ferry)
                let result = try await cli.run(["add", origin.url("/ok.bin"), "gopher://127.0.0.1/x.bin"])
                #expect(result.status == 1, "\(result)")
                #expect(result.lines.count == 1, "only the accepted URL has an id: \(result)")
                #expect(result.stderr.contains("unsupported_scheme"), "\(result)")
                #expect(result.stderr.contains("gopher://127.0.0.1/x.bin"), "\(result)")
            }
        }

        @Test func aRefusedSingleURLPrintsTheAPIErrorAndCode() async throws {
            try await withOriginAndFerry { _, ferry in
                let result = try await FerryCLI(ferry: ferry).run(["add", "not a url"])
                #expect(result.status == 1, "\(result)")
                #expect(result.stdout.isEmpty)
                #expect(result.stderr.hasPrefix("ferry: "), "\(result)")
                #expect(result.stderr.contains("[invalid_url, HTTP 400]"), "\(result)")
            }
        }

        @Test func usageErrorsAreCaughtBeforeAnyRequest() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let twoWithName = try await cli.run(["add", origin.url("/a"), origin.url("/b"), "--filename", "x"])
                #expect(twoWithName.status == 64, "\(twoWithName)")
                #expect(twoWithName.stderr.contains("--filename"), "\(twoWithName)")
                let badHeader = try await cli.run(["add", origin.url("/a"), "--header", "no colon"])
                #expect(badHeader.status == 64, "\(badHeader)")
                let tooMany = try await cli.run(["add", origin.url("/a"), "--connections", "17"])
                #expect(tooMany.status == 64, "\(tooMany)")
                #expect(tooMany.stderr == "ferry: --connections must be from 1 to 16 (got 17)\n", "\(tooMany)")
                let badSpeed = try await cli.run(["add", origin.url("/a"), "--max-speed", "fast"])
                #expect(badSpeed.status == 64, "\(badSpeed)")
                #expect(badSpeed.stderr.contains("--max-speed"), "\(badSpeed)")
                let created = try await cli.get("/api/v1/jobs")
                #expect(created.text.contains("\"jobs\":[]"), "nothing was submitted: \(created.text)")
            }
        }

        @Test func aLargeBatchIsWaitedForFromTheListing() async throws {
            try await withOriginAndFerry { origin, ferry in
                let digest = try originFile(origin, "many.bin", size: 20_000, seed: 12)
                let cli = FerryCLI(ferry: ferry)
                let urls = (0..<30).map { origin.url("/many.bin?n=\($0)") }
                let result = try await cli.run(["add"] + urls + ["--wait", "--json"])
                #expect(result.status == 0, "\(result)")
                let jobs = try #require(try result.json() as? [[String: Any]], "\(result)")
                #expect(jobs.count == 30)
                #expect(jobs.allSatisfy { $0["state"] as? String == "finished" && $0["sha256"] as? String == digest })
            }
        }

        @Test func interruptingTheWaitExits130AndARemovedJobEndsItWithFailure() async throws {
            try await withOriginAndFerry { origin, ferry in
                _ = try originFile(origin, "long.bin", size: 3_000_000, seed: 13)
                let cli = FerryCLI(ferry: ferry)
                let interrupted = try cli.launch(["add", origin.url("/slow/long.bin?rate=100000"), "--wait"])
                defer {
                    interrupted.killGroup()
                    interrupted.stopInBackground(grace: 5) { Fixture.removeTree(interrupted.outputDirectory) }
                }
                try await eventually("the job to start downloading") {
                    interrupted.standardOutput().contains("  downloading  ")
                }
                interrupted.terminate(signal: SIGINT)
                let status = try await offThePool { interrupted.waitForExit(timeout: 10) }
                #expect(status == 130, "\(interrupted.standardError())")
                let id = try #require(interrupted.standardOutput().split(separator: "\n").first.map(String.init))
                // The job goes on without the client.
                #expect(try await cli.job(id)["state"] as? String == "downloading")

                let waiting = try cli.launch(["add", origin.url("/slow/long.bin?rate=100000"), "--wait"])
                defer {
                    waiting.killGroup()
                    waiting.stopInBackground(grace: 5) { Fixture.removeTree(waiting.outputDirectory) }
                }
                try await eventually("the second wait to print its job") { waiting.standardOutput().contains("\(id)  ") }
                #expect(try await cli.run(["rm", id]).status == 0)
                let ended = try await offThePool { waiting.waitForExit(timeout: 20) }
                #expect(ended == 1, "\(waiting.standardOutput()) \(waiting.standardError())")
                #expect(waiting.standardError().contains("\(id) was removed"), "\(waiting.standardError())")
            }
        }
    }
}
