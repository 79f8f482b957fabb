import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry get`: the file's bytes, its name, resuming a partial local file, and the digest check.
    @Suite("ferry get")
    struct GetCommandTests {
        static let contentRoute = "/api/v1/jobs/:id/content"

        /// A finished job for a file of `size` bytes, and the file's digest.
        private func finishedJob(_ origin: NginxOrigin, _ cli: FerryCLI, name: String, size: Int, seed: Int,
                                 options: [String] = []) async throws -> (id: String, sha256: String) {
            let digest = try originFile(origin, name, size: size, seed: seed)
            let added = try await cli.run(["add", origin.url("/" + name), "--wait"] + options)
            #expect(added.status == 0, "\(added)")
            return (try #require(added.lines.first), digest)
        }

        @Test func getSavesTheFileUnderTheJobsNameInTheWorkingDirectory() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let (id, digest) = try await finishedJob(origin, cli, name: "source.bin", size: 1_500_000, seed: 8,
                                                         options: ["--filename", "report.bin"])
                let directory = try Fixture.tempDirectory("ferry-get")
                defer { Fixture.removeTree(directory) }
                let result = try await cli.run(["get", id], directory: directory)
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.hasPrefix("report.bin  "), "\(result)")
                #expect(try Fixture.sha256Hex(ofFile: directory + "/report.bin") == digest)
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["report.bin"])
            }
        }

        @Test func getResumesAPartialFileWithARangeRequest() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let size = 2_000_000
                let (id, digest) = try await finishedJob(origin, cli, name: "big.bin", size: size, seed: 9)
                let directory = try Fixture.tempDirectory("ferry-get")
                defer { Fixture.removeTree(directory) }
                let partial = directory + "/partial.bin"
                let kept = 700_001
                try Data(Fixture.content(size: kept, seed: 9)).write(to: URL(fileURLWithPath: partial))
                let before206 = try await cli.requestCount(route: Self.contentRoute, method: "GET", status: 206)
                let before200 = try await cli.requestCount(route: Self.contentRoute, method: "GET", status: 200)

                let result = try await cli.run(["get", id, "-o", partial, "--json"])
                #expect(result.status == 0, "\(result)")
                let report = try result.jsonObject()
                #expect(report["resumedFrom"] as? Int == kept)
                #expect(report["transferred"] as? Int == size - kept)
                #expect(report["bytes"] as? Int == size)
                #expect(report["sha256"] as? String == digest)
                #expect(try Fixture.sha256Hex(ofFile: partial) == digest)
                // Ferry answered one range request (206) and sent no whole file (200).
                #expect(try await cli.requestCount(route: Self.contentRoute, method: "GET", status: 206) == before206 + 1)
                #expect(try await cli.requestCount(route: Self.contentRoute, method: "GET", status: 200) == before200)

                // Run again: the file is complete, nothing is transferred.
                let again = try await cli.run(["get", id, "-o", partial, "--json"])
                #expect(again.status == 0, "\(again)")
                #expect(try again.jsonObject()["transferred"] as? Int == 0)
                #expect(try await cli.requestCount(route: Self.contentRoute, method: "GET", status: 206) == before206 + 1)
            }
        }

        @Test func aPartialFileOfOtherBytesIsDownloadedAgainFromZero() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let (id, digest) = try await finishedJob(origin, cli, name: "other.bin", size: 1_000_000, seed: 10)
                let directory = try Fixture.tempDirectory("ferry-get")
                defer { Fixture.removeTree(directory) }
                let path = directory + "/other.bin"
                try Data(Fixture.content(size: 300_000, seed: 99)).write(to: URL(fileURLWithPath: path))
                let result = try await cli.run(["get", id, "-o", directory])
                #expect(result.status == 0, "\(result)")
                #expect(try Fixture.sha256Hex(ofFile: path) == digest, "the wrong prefix must not survive")
            }
        }

        @Test func getOfAJobThatIsNotFinishedFails() async throws {
            try await withOriginAndFerry { origin, ferry in
                let cli = FerryCLI(ferry: ferry)
                let id = try await cli.add(origin.url("/later.bin"), ["--paused"])
                let directory = try Fixture.tempDirectory("ferry-get")
                defer { Fixture.removeTree(directory) }
                let result = try await cli.run(["get", id], directory: directory)
                #expect(result.status == 1, "\(result)")
                #expect(result.stderr.contains("not finished"), "\(result)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
                let unknown = try await cli.run(["get", "no-such-job"], directory: directory)
                #expect(unknown.status == 1)
                #expect(unknown.stderr.contains("[not_found, HTTP 404]"), "\(unknown)")
            }
        }
    }
}
