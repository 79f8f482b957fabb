import FerryTestSupport
import Foundation
import Testing

/// `--proxy` (API.md, "Downloader options") with a real tinyproxy on loopback: jobs go through it byte-identical,
/// the proxy is told to connect to the address Ferry resolved and checked (never a name it would resolve itself),
/// a destination the guard refuses is refused though the proxy could reach it, a proxy answering garbage is a clear
/// error, and the proxy's credentials never reach Ferry's log. Ferry runs as its own process (its log is read).
@Suite("Proxy, end to end", .serialized)
struct ProxyTests {
    static let password = "s3cret-Proxy-pw"

    /// `ferry serve` through `proxy`, destinations limited to 127.0.0.1/32 (so ::1 is refused).
    static func launch(port: Int, spool: String, proxy: String) async throws -> ChildProcess {
        let process = try ChildProcess.launch(
            try ferryExecutable(),
            ["serve", "--host", "127.0.0.1", "--port", String(port), "--spool", spool, "--allow-network", "127.0.0.1/32",
             "--min-free-space", "0", "--proxy", proxy, "--public", RunningFerry.repositoryRoot + "/Public"],
            environment: ["PATH": "/usr/bin:/bin", "http_proxy": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9"])
        try await ChildFerry.awaitHealthy(process, port: port)
        return process
    }

    static func ended(_ job: [String: Any]) -> Bool { ["finished", "failed"].contains(job["state"] as? String) }

    @Test func jobsGoThroughTheProxyToTheCheckedAddressAndRefusedOnesNever() async throws {
        try await withNginx { nginx in
            let size = 2 * 1024 * 1024 + 3
            try Fixture.writeFile(at: nginx.root + "/via.bin", size: size, seed: 41)
            let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 41))
            let fault = try await FaultOrigin.start()
            defer { fault.stop() }
            let proxy = try await TinyProxy.start(user: "ferry", password: Self.password)
            defer { proxy.stop() }
            let spool = try Fixture.tempDirectory("ferry-proxy")
            defer { Fixture.removeTree(spool) }
            let port = try RestartTests.freePort()
            let ferry = try await Self.launch(port: port, spool: spool, proxy: proxy.url(user: "ferry", password: Self.password))
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)

            // A name: Ferry resolves localhost itself and the proxy is asked for 127.0.0.1, not for the name.
            let direct = "http://localhost:\(nginx.port)/via.bin"
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": direct, "connections": 2]).json()["id"] as? String)
            let done = try await client.waitForJob(id, timeout: 40, Self.ended)
            #expect(done["state"] as? String == "finished", "\(done)")
            #expect(done["sha256"] as? String == expected)
            #expect(try Fixture.sha256Hex(ofFile: spool + "/files/via.bin") == expected)
            #expect(proxy.connectTargets().contains("127.0.0.1:\(nginx.port)"), "\(proxy.connectTargets())")
            #expect(!proxy.log().contains("CONNECT localhost"), "the proxy never resolves the destination")
            #expect(nginx.accessLog().contains { $0.path == "/via.bin" })

            // A redirect to another host: pinned before it is followed, through the proxy.
            let hop = fault.url("/r/1?to=" + "http://localhost:\(nginx.port)/via.bin?hop=1".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            let hopID = try #require(try await client.json("POST", "/api/v1/jobs", ["url": hop]).json()["id"] as? String)
            let hopped = try await client.waitForJob(hopID, timeout: 40, Self.ended)
            #expect(hopped["state"] as? String == "finished", "\(hopped)")
            #expect(hopped["sha256"] as? String == expected)
            #expect((hopped["finalUrl"] as? String)?.hasPrefix("http://localhost:\(nginx.port)/via.bin") == true, "\(hopped["finalUrl"] ?? "none")")
            #expect(proxy.connectTargets().contains("127.0.0.1:\(fault.port)"))

            // A redirect to ::1, which the proxy could reach but the guard refuses (only 127.0.0.1/32 is allowed).
            let before = proxy.connectTargets().count
            let refusedURL = fault.url("/r/1?to=" + "http://[::1]:\(nginx.port)/via.bin?refused=1".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            let refusedID = try #require(try await client.json("POST", "/api/v1/jobs", ["url": refusedURL]).json()["id"] as? String)
            let refused = try await client.waitForJob(refusedID, timeout: 40, Self.ended)
            #expect(refused["state"] as? String == "failed", "\(refused)")
            #expect((refused["error"] as? [String: Any])?["code"] as? String == "forbidden_destination", "\(refused)")
            let asked = proxy.connectTargets().dropFirst(before)
            #expect(asked.allSatisfy { $0 == "127.0.0.1:\(fault.port)" }, "only the origin, never ::1: \(Array(asked))")
            #expect(!nginx.accessLog().contains { $0.path.contains("refused=1") })

            // The environment's proxy variables (set to a dead port) were ignored throughout; the log never shows
            // the proxy's password, and names the proxy with ***@.
            let log = ferry.standardError()
            #expect(!log.contains(Self.password), "the proxy's password is in the log")
            #expect(log.contains("http://***@127.0.0.1:\(proxy.port)"), "\(log.suffix(1500))")
        }
    }

    @Test func aSocksProxyIsAskedForTheCheckedAddressNeverTheName() async throws {
        try await withNginx { nginx in
            let size = 1024 * 1024 + 7
            try Fixture.writeFile(at: nginx.root + "/socks.bin", size: size, seed: 43)
            let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 43))
            let fault = try await FaultOrigin.start()
            defer { fault.stop() }
            let socks = try await SocksProxy.start(user: "ferry", password: Self.password)
            defer { socks.stop() }
            let spool = try Fixture.tempDirectory("ferry-proxy-socks")
            defer { Fixture.removeTree(spool) }
            let port = try RestartTests.freePort()
            let ferry = try await Self.launch(port: port, spool: spool, proxy: socks.url(user: "ferry", password: Self.password))
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)

            // A name: Ferry resolves localhost itself; the SOCKS server gets the address (ATYP 1), never a name.
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": "http://localhost:\(nginx.port)/socks.bin", "connections": 2])
                .json()["id"] as? String)
            let done = try await client.waitForJob(id, timeout: 40, Self.ended)
            #expect(done["state"] as? String == "finished", "\(done)")
            #expect(done["sha256"] as? String == expected)
            #expect(try Fixture.sha256Hex(ofFile: spool + "/files/socks.bin") == expected)
            let asked = socks.requests()
            #expect(asked.contains { $0.atyp == "ipv4" && $0.host == "127.0.0.1" && $0.port == nginx.port && $0.user == "ferry" && $0.granted }, "\(asked)")
            #expect(asked.allSatisfy { $0.atyp == "ipv4" && $0.host == "127.0.0.1" }, "only the checked address, never a name: \(asked)")
            #expect(nginx.accessLog().contains { $0.path == "/socks.bin" })

            // A redirect to ::1, which the guard refuses (only 127.0.0.1/32 is allowed): the proxy is never asked.
            let before = socks.requests().count
            let refusedURL = fault.url("/r/1?to=" + "http://[::1]:\(nginx.port)/socks.bin?refused=1".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)
            let refusedID = try #require(try await client.json("POST", "/api/v1/jobs", ["url": refusedURL]).json()["id"] as? String)
            let refused = try await client.waitForJob(refusedID, timeout: 40, Self.ended)
            #expect(refused["state"] as? String == "failed", "\(refused)")
            #expect((refused["error"] as? [String: Any])?["code"] as? String == "forbidden_destination", "\(refused)")
            let after = Array(socks.requests().dropFirst(before))
            #expect(!after.isEmpty && after.allSatisfy { $0.host == "127.0.0.1" && $0.port == fault.port }, "only the origin, never ::1: \(after)")
            #expect(!nginx.accessLog().contains { $0.path.contains("refused=1") })

            let log = ferry.standardError()
            #expect(!log.contains(Self.password), "the proxy's password is in the log")
            #expect(log.contains("socks5h://***@127.0.0.1:\(socks.port)"), "\(log.suffix(1500))")
        }
    }

    @Test func deliveriesAndWebhooksGoThroughTheProxyIntact() async throws {
        try await withNginx { nginx in
            let size = 700_001
            let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 44))
            let source = try await FaultOrigin.start()
            defer { source.stop() }
            let hooks = try await FaultOrigin.start()
            defer { hooks.stop() }
            let proxy = try await TinyProxy.start()
            defer { proxy.stop() }
            let spool = try Fixture.tempDirectory("ferry-proxy-deliver")
            defer { Fixture.removeTree(spool) }
            let port = try RestartTests.freePort()
            let ferry = try await Self.launch(port: port, spool: spool, proxy: proxy.url())
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)

            // Names for both targets: Ferry resolves and checks them, the proxy connects to the address.
            let created = try await client.json("POST", "/api/v1/jobs", [
                "url": source.url("/f/out.bin?size=\(size)&seed=44"),
                "deliver": ["url": "http://localhost:\(nginx.port)/upload/via-proxy/out.bin"],
                "notify": "http://localhost:\(hooks.port)/u/hook",
            ])
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            let id = try #require(try created.json()["id"] as? String)
            let done = try await client.waitForJob(id, timeout: 40, Self.ended)
            #expect(done["state"] as? String == "finished", "\(done)")
            #expect((done["delivery"] as? [String: Any])?["state"] as? String == "delivered", "\(done)")
            let uploaded = try Fixture.sha256Hex(ofFile: nginx.root + "/upload/via-proxy/out.bin")
            #expect(uploaded == expected)
            #expect(nginx.accessLog().contains { $0.method == "PUT" && $0.path == "/upload/via-proxy/out.bin" && $0.status == 201 })

            // The webhook notice arrives once the job ended, whole.
            let deadline = Date().addingTimeInterval(20)
            while await hooks.uploads().isEmpty, Date() < deadline { try await Task.sleep(nanoseconds: 100_000_000) }
            let notice = try await #require(hooks.uploads().first)
            #expect(notice.method == "POST" && notice.path == "/u/hook" && notice.complete)
            #expect(notice.headers["content-length"] == String(notice.length), "\(notice.headers)")
            #expect(notice.headers["webhook-signature"]?.hasPrefix("v1,") == true, "\(notice.headers)")
            #expect(notice.headers["content-type"] == "application/json")

            // All three went through the proxy, which was told the checked address of each, never a name.
            let targets = proxy.connectTargets()
            for expectedTarget in ["127.0.0.1:\(source.port)", "127.0.0.1:\(nginx.port)", "127.0.0.1:\(hooks.port)"] {
                #expect(targets.contains(expectedTarget), "\(expectedTarget) not in \(targets)")
            }
            #expect(targets.allSatisfy { $0.hasPrefix("127.0.0.1:") }, "\(targets)")

            // Delivery and webhook targets on refused addresses are refused at submit; the proxy is not asked.
            let before = proxy.connectTargets().count
            for (field, value) in [("deliver", ["url": "http://[::1]:\(nginx.port)/upload/refused.bin"] as Any),
                                   ("notify", "http://[::1]:\(hooks.port)/u/refused" as Any)] {
                let refused = try await client.json("POST", "/api/v1/jobs", ["url": source.url("/f/r.bin?size=10&seed=1"), field: value])
                #expect(refused.status == 403, "\(field): \(String(decoding: refused.body, as: UTF8.self))")
                #expect((try refused.json()["error"] as? [String: Any])?["code"] as? String == "forbidden_destination", "\(field)")
            }
            try await Task.sleep(nanoseconds: 300_000_000)
            // Only the refused targets matter here: the job's later webhook notice (job.finished after
            // job.delivering) may still go through the proxy meanwhile, to its checked address.
            let later = proxy.connectTargets().dropFirst(before)
            #expect(later.allSatisfy { $0 == "127.0.0.1:\(hooks.port)" }, "\(proxy.connectTargets())")
        }
    }

    @Test func aProxyAnsweringGarbageIsAClearErrorAndTheJobCanResume() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/g.bin", size: 100_000, seed: 42)
            let garbagePort = try RestartTests.freePort()
            let script = """
                import socket, sys
                s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
                while True:
                    c, _ = s.accept()
                    try:
                        c.recv(4096); c.sendall(b"SSH-2.0-not a proxy\\r\\n\\x00\\xff garbage\\r\\n\\r\\n")
                    except OSError:
                        pass
                    c.close()
                """
            let garbage = try ChildProcess.launch("/usr/bin/python3", ["-c", script, String(garbagePort)])
            defer { garbage.stopInBackground(grace: 1) { Fixture.removeTree(garbage.outputDirectory) } }
            _ = await pollUntil(timeout: 10) { LoopbackSocket.accepts(port: garbagePort) ? true : nil }
            let spool = try Fixture.tempDirectory("ferry-proxy-garbage")
            defer { Fixture.removeTree(spool) }
            let port = try RestartTests.freePort()
            let ferry = try await Self.launch(port: port, spool: spool, proxy: "http://u:\(Self.password)@127.0.0.1:\(garbagePort)")
            defer { ferry.stopInBackground(grace: 2) }
            let client = TestClient(port: port)
            let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/g.bin")]).json()["id"] as? String)
            let told = try await client.waitForJob(id, timeout: 30) { ($0["error"] as? [String: Any]) != nil }
            let error = try #require(told["error"] as? [String: Any])
            #expect(["retrying", "network_error"].contains(error["code"] as? String), "\(error)")
            let message = (error["message"] as? String ?? "").lowercased()
            #expect(message.contains("proxy") || message.contains("connect"), "\(message)")
            #expect(!message.contains(Self.password.lowercased()))
            #expect(nginx.accessLog().isEmpty, "nothing reached the origin")
            // Nothing lost: the job is still there, waiting for its next try or resumable.
            #expect(try await client.get("/api/v1/jobs/\(id)").status == 200)
            #expect(!ferry.standardError().contains(Self.password))
        }
    }
}
