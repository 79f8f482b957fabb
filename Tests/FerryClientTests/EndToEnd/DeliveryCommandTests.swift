import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry add --deliver-to`: a real nginx origin, a real nginx DAV target, an in-process Ferry and the built
    /// `ferry` executable; `--wait` follows the download and then the upload, and its exit status says whether
    /// the file was delivered.
    @Suite("ferry add --deliver-to")
    struct DeliveryCommandTests {
        /// nginx, a DAV target and Ferry for one test, all stopped afterwards.
        func withTarget(_ body: (NginxOrigin, DAVTarget, FerryCLI) async throws -> Void) async throws {
            let target = try await offThePool { try DAVTarget.start() }
            do {
                try await withOriginAndFerry { origin, ferry in try await body(origin, target, FerryCLI(ferry: ferry)) }
            } catch {
                target.stop()
                throw error
            }
            target.stop()
        }

        @Test func waitFollowsTheDownloadThenTheUploadAndExitsZeroOnceDelivered() async throws {
            try await withTarget { origin, target, cli in
                let digest = try originFile(origin, "film.bin", size: 3_000_000, seed: 21)
                let result = try await cli.run([
                    "add", origin.url("/slow/film.bin?rate=1500000"), "--deliver-to", target.url("/upload/in/film.bin"),
                    "--delivery-header", "X-Delivery-Test: from-ferry-add", "--wait",
                ])
                #expect(result.status == 0, "\(result)")
                let id = try #require(result.lines.first)
                let host = "127.0.0.1:\(target.port)"
                // Not a terminal: one plain line per change: downloading, then delivering, then finished.
                let downloading = result.lines.firstIndex { $0.hasPrefix("\(id)  downloading  ") }
                let delivering = result.lines.firstIndex { $0.hasPrefix("\(id)  delivering  ") }
                #expect(downloading != nil && delivering != nil, "\(result)")
                if let downloading, let delivering { #expect(downloading < delivering, "\(result)") }
                #expect(result.lines.contains { $0.hasPrefix("\(id)  delivering  ") && $0.contains("  to \(host)") }, "\(result)")
                #expect(result.lines.last?.hasPrefix("\(id)  finished  100%") == true, "\(result)")
                #expect(result.lines.last?.hasSuffix("delivered to \(host)") == true, "\(result)")
                #expect(try Fixture.sha256Hex(ofFile: target.root + "/upload/in/film.bin") == digest)
                let puts = target.requests().filter { $0.method == "PUT" }
                #expect(puts.map(\.path) == ["/upload/in/film.bin"] && puts.first?.testHeader == "from-ferry-add", "\(puts)")
                let job = try await cli.job(id)
                let delivery = try #require(job["delivery"] as? [String: Any], "\(job)")
                #expect(job["state"] as? String == "finished")
                #expect(delivery["state"] as? String == "delivered" && delivery["bytesSent"] as? Int == 3_000_000, "\(delivery)")

                let shown = try await cli.run(["show", id])
                #expect(shown.status == 0, "\(shown)")
                #expect(shown.lines.contains { $0.hasPrefix("delivery:") && $0.hasSuffix("PUT " + target.url("/upload/in/film.bin")) },
                        "\(shown)")
                #expect(shown.lines.contains { $0.hasPrefix("delivery state:") && $0.hasSuffix(" delivered") }, "\(shown)")
                #expect(shown.lines.contains { $0.hasPrefix("delivered:") }, "\(shown)")
            }
        }

        @Test func aRefusingTargetFailsTheWaitWithTheStatus() async throws {
            try await withTarget { origin, target, cli in
                _ = try originFile(origin, "refused.bin", size: 200_000, seed: 22)
                let result = try await cli.run(["add", origin.url("/refused.bin"), "--deliver-to", target.url("/refuse/r.bin"), "--wait"])
                #expect(result.status == 1, "\(result)")
                let id = try #require(result.lines.first)
                #expect(result.lines.last?.hasPrefix("\(id)  failed  100%") == true, "\(result)")
                #expect(result.stderr.contains("delivery_failed") && result.stderr.contains("HTTP 403"), "\(result)")
                let job = try await cli.job(id)
                let error = try #require(job["error"] as? [String: Any], "\(job)")
                #expect(error["code"] as? String == "delivery_failed" && error["httpStatus"] as? Int == 403, "\(error)")
                #expect(target.requests().contains { $0.method == "PUT" && $0.path == "/refuse/r.bin" && $0.status == 403 })
            }
        }

        @Test func deleteAfterRemovesFerrysCopyOnceDelivered() async throws {
            try await withTarget { origin, target, cli in
                let digest = try originFile(origin, "once.bin", size: 300_000, seed: 23)
                let result = try await cli.run([
                    "add", origin.url("/once.bin"), "--deliver-to", target.url("/upload/once.bin"), "--delete-after", "--wait",
                    "--json",
                ])
                #expect(result.status == 0, "\(result)")
                let job = try result.jsonObject()
                #expect(job["state"] as? String == "finished", "\(job)")
                let id = try #require(job["id"] as? String)
                #expect(try Fixture.sha256Hex(ofFile: target.root + "/upload/once.bin") == digest)
                let content = try await cli.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 410, "\(content.status) \(content.text.prefix(200))")
            }
        }

        @Test func usageErrorsAreCaughtBeforeAnyRequest() async throws {
            try await withTarget { origin, target, cli in
                let noTarget = try await cli.run(["add", origin.url("/x.bin"), "--delete-after"])
                #expect(noTarget.status == 64 && noTarget.stderr.contains("--deliver-to"), "\(noTarget)")
                let badMethod = try await cli.run(["add", origin.url("/x.bin"), "--deliver-to", target.url("/upload/x"), "--method", "PATCH"])
                #expect(badMethod.status == 64 && badMethod.stderr.contains("PUT or POST"), "\(badMethod)")
                let list = try await cli.get("/api/v1/jobs")
                #expect(list.text.contains(#""jobs":[]"#), "no job was created: \(list.text.prefix(300))")
            }
        }
    }
}
