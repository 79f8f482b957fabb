import FerryTestSupport
import Foundation
import Testing

/// The `ferry` process itself: SIGKILL mid-download and SIGTERM, then a new start that continues.
@Suite("Process restarts", .serialized)
struct RestartTests {
    /// A port nothing listens on right now.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `ferry serve` on `port` with `spool` and waits until it answers /healthz.
    static func launch(port: Int, spool: String) async throws -> ChildProcess {
        let process = try ChildProcess.launch(
            try ferryExecutable(),
            ["serve", "--host", "127.0.0.1", "--port", String(port), "--spool", spool,
             "--allow-private-networks", "--min-free-space", "0", "--public", RunningFerry.repositoryRoot + "/Public"],
            environment: nil)
        try await ChildFerry.awaitHealthy(process, port: port)
        return process
    }

    @Test func killNineMidDownloadThenRestartFinishesWithTheRightBytes() async throws {
        try await withNginx { nginx in
            let size = 6 * 1024 * 1024
            try Fixture.writeFile(at: nginx.root + "/crash.bin", size: size, seed: 21)
            let spool = try Fixture.tempDirectory("ferry-crash")
            defer { Fixture.removeTree(spool) }
            let port = try Self.freePort()
            var ferry = try await Self.launch(port: port, spool: spool)
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)
            // 512 KiB/s: 12 s for the file, so that the kill still comes mid-download when this process is held up
            // for seconds between seeing 1.5 MB and killing (a full parallel run on a loaded machine held it ~4 s
            // at 1 MiB/s, and the file was whole before the kill: no Range request to see).
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/crash.bin?rate=524288")]).json()["id"] as? String)
            try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 1_500_000 }
            ferry.terminate(signal: SIGKILL)
            #expect(await ferry.exit(within: 5) != nil)

            ferry = try await Self.launch(port: port, spool: spool)
            let finished = try await client.waitForJob(id, timeout: 40) { $0["state"] as? String == "finished" }
            #expect(finished["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 21)))
            // nginx logs a request once it has sent its last byte, which on a busy machine can come after Ferry has
            // the file: the line is waited for (seen missing under a full parallel run beside other builds).
            var resumed = nginx.accessLog().filter { $0.path.hasPrefix("/slow/crash.bin") && $0.status == 206 }
            for _ in 0..<50 where resumed.isEmpty {
                try await Task.sleep(nanoseconds: 100_000_000)
                resumed = nginx.accessLog().filter { $0.path.hasPrefix("/slow/crash.bin") && $0.status == 206 }
            }
            // Why not, when it does not (a rare failure under a loaded full run, issue 24): the origin's requests and the
            // restarted Ferry's log (recovery, the resume decision).
            let requests = nginx.accessLog().filter { $0.path.hasPrefix("/slow/crash.bin") }.map { "\($0.status) \($0.bytesSent)" }
            #expect(!resumed.isEmpty, """
                after a crash the download continues with a Range request; origin saw \(requests); \
                the job: \(finished); Ferry's log: \(ferry.standardError().suffix(4000))
                """)
            let fetched = nginx.accessLog().filter { $0.path.hasPrefix("/slow/crash.bin") }.reduce(Int64(0)) { $0 + $1.bytesSent }
            #expect(fetched < Int64(Double(size) * 1.5), "fetched \(fetched) bytes for a \(size)-byte file")
        }
    }

    @Test func sigtermExitsZeroQuicklyAndJobsContinueOnTheNextStart() async throws {
        try await withNginx { nginx in
            let size = 5 * 1024 * 1024
            try Fixture.writeFile(at: nginx.root + "/term.bin", size: size, seed: 22)
            let spool = try Fixture.tempDirectory("ferry-term")
            defer { Fixture.removeTree(spool) }
            let port = try Self.freePort()
            var ferry = try await Self.launch(port: port, spool: spool)
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/term.bin?rate=1048576")]).json()["id"] as? String)
            let paused = try #require(try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/slow/term.bin?rate=1048577"), "paused": true]).json()["id"] as? String)
            try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 1_000_000 }
            let stopAt = Date()
            ferry.terminate(signal: SIGTERM)
            let status = await ferry.exit(within: 10)
            #expect(status == 0, "ferry exited with \(String(describing: status)); log: \(ferry.standardError().suffix(1500))")
            #expect(Date().timeIntervalSince(stopAt) < 10)

            ferry = try await Self.launch(port: port, spool: spool)
            let finished = try await client.waitForJob(id, timeout: 40) { $0["state"] as? String == "finished" }
            #expect(finished["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 22)))
            #expect(try await client.get("/api/v1/jobs/\(paused)").json()["state"] as? String == "paused", "a user-paused job stays paused")
        }
    }
}
