import FerryTestSupport
import Foundation
import Testing

extension ClientEndToEnd {
    /// `ferry watch` into a pipe, and how every command finds and authenticates to its Ferry.
    @Suite("ferry watch, server and token")
    struct WatchAndAccessTests {
        @Test func watchPrintsALinePerChangeAndEndsOnInterrupt() async throws {
            try await withOriginAndFerry { origin, ferry in
                _ = try originFile(origin, "watched.bin", size: 600_000, seed: 11)
                let cli = FerryCLI(ferry: ferry)
                let earlier = try await cli.add(origin.url("/missing.bin"), ["--paused"])
                let watch = try cli.launch(["watch"])
                defer {
                    watch.killGroup()
                    watch.stopInBackground(grace: 5) { Fixture.removeTree(watch.outputDirectory) }
                }
                // The listing at start: the job that was already there.
                try await eventually("the initial listing") { watch.standardOutput().contains("\(earlier)  paused") }

                let id = try await cli.add(origin.url("/slow/watched.bin?rate=400000"))
                try await eventually("the job to finish in watch's output") {
                    watch.standardOutput().contains("\(id)  finished  100%")
                }
                let removed = try await cli.run(["rm", earlier])
                #expect(removed.status == 0)
                try await eventually("the removal in watch's output") {
                    watch.standardOutput().contains("\(earlier)  removed")
                }
                let lines = watch.standardOutput().split(separator: "\n")
                #expect(lines.contains { $0.hasPrefix("\(id)  downloading") }, "\(lines)")

                watch.terminate(signal: SIGINT)
                let status = try await offThePool { watch.waitForExit(timeout: 10) }
                #expect(status == 0, "watch ends with status 0 on Ctrl-C: \(watch.standardError())")
            }
        }

        @Test func tokenAndServerComeFromFlagsOrTheEnvironment() async throws {
            try await withOriginAndFerry(token: "s3cret-token") { _, ferry in
                let flags = try await FerryCLI(ferry: ferry).run(["ls", "--json"])
                #expect(flags.status == 0, "\(flags)")

                let environment = clientEnvironment(["FERRY_URL": ferry.url, "FERRY_TOKEN": "s3cret-token"])
                let fromEnvironment = try await runFerry(["ls", "--json"], environment: environment)
                #expect(fromEnvironment.status == 0, "\(fromEnvironment)")

                // A flag wins over its variable.
                let wrongFlag = try await runFerry(["ls", "--token", "wrong"], environment: environment)
                #expect(wrongFlag.status == 1)
                #expect(wrongFlag.stderr.contains("[unauthorized, HTTP 401]"), "\(wrongFlag)")

                let none = try await runFerry(["ls", "--server", ferry.url])
                #expect(none.status == 1)
                #expect(none.stderr.contains("unauthorized"), "\(none)")
            }
        }

        @Test func anUnreachableServerIsReportedNotHung() async throws {
            let port = try closedPort()
            let result = try await runFerry(["ls", "--server", "http://127.0.0.1:\(port)"], timeout: 30)
            #expect(result.status == 1, "\(result)")
            #expect(result.stderr.contains("cannot reach Ferry at http://127.0.0.1:\(port)"), "\(result)")
            let bad = try await runFerry(["ls", "--server", "ftp://127.0.0.1:1"], timeout: 30)
            #expect(bad.status == 64, "\(bad)")
        }
    }
}

/// A loopback port nothing listens on: bound, read and closed again.
func closedPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket failed: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw HarnessError("bind failed: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
