import FerryTestSupport
import Foundation
import Testing

/// FTP, FTPS and SFTP sources through the `ferry` process against real servers on 127.0.0.1: pyftpdlib
/// (`FTPOrigin`) and OpenSSH's sshd (`SSHServer`). Ferry runs as a child process with its own `HOME`, so its log
/// can be read and SFTP uses the test's key and known-hosts file as libcurl's and Ferry's defaults.
@Suite("FTP, FTPS and SFTP sources, end to end", .serialized)
struct FileProtocolTests {
    /// A `ferry serve` child allowed to reach 127.0.0.1 only, stopped by pid.
    struct Ferry {
        let process: ChildProcess
        let client: TestClient
        let spool: String

        static func start(home: String, arguments: [String] = [], environment extra: [String: String] = [:]) async throws -> Ferry {
            let spool = try Fixture.tempDirectory("ferry-protocols")
            let port = try RestartTests.freePort()
            var environment = ProcessInfo.processInfo.environment
            environment["HOME"] = home
            environment.merge(extra) { _, new in new }
            let process = try ChildProcess.launch(
                try ferryExecutable(),
                ["serve", "--host", "127.0.0.1", "--port", String(port), "--spool", spool, "--allow-network", "127.0.0.1/32",
                 "--min-free-space", "0", "--log-level", "debug", "--public", RunningFerry.repositoryRoot + "/Public"] + arguments,
                environment: environment)
            do {
                try await ChildFerry.awaitHealthy(process, port: port)
            } catch {
                Fixture.removeTree(spool)
                throw error
            }
            return Ferry(process: process, client: TestClient(port: port), spool: spool)
        }

        /// Stops the process (SIGTERM), awaits its exit and returns its whole log.
        func stop() async -> String {
            _ = await process.stopped(grace: 10)
            let log = process.standardError() + process.standardOutput()
            Fixture.removeTree(spool)
            return log
        }

        /// Stops the process (SIGTERM now, the rest on a thread of its own), then removes the spool: for a `defer`.
        func stopInBackground() {
            let spool = spool
            process.stopInBackground(grace: 10) { Fixture.removeTree(spool) }
        }

        func submit(_ url: String, _ extra: [String: Any] = [:]) async throws -> String {
            var body = extra
            body["url"] = url
            let created = try await client.json("POST", "/api/v1/jobs", body)
            #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
            return try #require(try created.json()["id"] as? String)
        }

        /// Polls the job until it finished or failed. A failed poll says whether the child still runs and how its log
        /// ends (a connection closed on a request is otherwise all a loaded machine's run tells).
        func ended(_ id: String, timeout: Double = 30) async throws -> [String: Any] {
            do {
                return try await client.waitForJob(id, timeout: timeout) { ["finished", "failed"].contains($0["state"] as? String ?? "") }
            } catch {
                let state = process.exitStatusIfExited().map { "exited with status \($0)" } ?? "still runs"
                throw TestClientError.protocolError("\(error) while waiting for job \(id) to end; ferry \(state); its log ends: "
                    + process.standardError().suffix(1500))
            }
        }
    }

    static func withFTP(_ options: FTPOrigin.Options = FTPOrigin.Options(), _ body: (FTPOrigin) async throws -> Void) async throws {
        let origin = try await FTPOrigin.start(options)
        do { try await body(origin) } catch { origin.stop(); throw error }
        origin.stop()
    }

    static func withSSH(_ body: (SSHServer) async throws -> Void) async throws {
        let server = try await SSHServer.start()
        do { try await body(server) } catch { server.stop(); throw error }
        server.stop()
    }

    static func errorCode(_ job: [String: Any]) -> String? { (job["error"] as? [String: Any])?["code"] as? String }
    static func errorMessage(_ job: [String: Any]) -> String { (job["error"] as? [String: Any])?["message"] as? String ?? "" }

    // MARK: FTP

    @Test func ftpDownloadIsByteIdenticalAndItsPasswordIsNeverShown() async throws {
        var options = FTPOrigin.Options()
        options.password = "pw-\(UUID().uuidString.prefix(8))"
        try await Self.withFTP(options) { origin in
            let size = 3 * 1024 * 1024 + 17
            try Fixture.writeFile(at: origin.root + "/data.bin", size: size, seed: 61)
            let home = try Fixture.tempDirectory("ferry-home")
            defer { Fixture.removeTree(home) }
            let ferry = try await Ferry.start(home: home)
            var log = ""
            var jobID = ""
            do {
                let events = try await ferry.client.events("/api/v1/events")
                let id = try await ferry.submit(origin.url("/data.bin"))
                jobID = id
                let job = try await ferry.ended(id)
                #expect(job["state"] as? String == "finished", "\(job)")
                #expect(job["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 61)))
                #expect(job["bytesExpected"] as? Int == size)
                #expect(job["filename"] as? String == "data.bin")
                let redacted = "ftp://***@127.0.0.1:\(origin.port)/data.bin"
                #expect(job["url"] as? String == redacted)
                #expect(job["finalUrl"] as? String == redacted)
                let content = try await ferry.client.get("/api/v1/jobs/\(id)/content")
                #expect(Fixture.sha256Hex(of: content.body) == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 61)))
                let seen = try await events.collect(timeout: 10) { event in
                    event.event == "job" && ((try? event.json()["state"] as? String) == "finished")
                }
                #expect(!seen.isEmpty)
                for event in seen { #expect(!event.data.contains(options.password), "an event shows the password: \(event.data)") }
                let list = try await ferry.client.get("/api/v1/jobs")
                #expect(!String(decoding: list.body, as: UTF8.self).contains(options.password))
                let metrics = try await ferry.client.get("/metrics")
                #expect(metrics.status == 200)
                #expect(!String(decoding: metrics.body, as: UTF8.self).contains(options.password))
            } catch {
                log = await ferry.stop()
                throw error
            }
            log = await ferry.stop()
            #expect(log.contains(jobID), "the debug log should speak of the job")
            #expect(!log.contains(options.password), "Ferry's log shows the FTP password")
            #expect(origin.retrievals().map(\.rest) == [0])
        }
    }

    @Test func ftpResumeAfterPauseContinuesFromTheOffsetOnDisk() async throws {
        var options = FTPOrigin.Options()
        options.rate = 512 * 1024
        try await Self.withFTP(options) { origin in
            let size = 3 * 1024 * 1024
            try Fixture.writeFile(at: origin.root + "/slow.bin", size: size, seed: 62)
            let home = try Fixture.tempDirectory("ferry-home")
            defer { Fixture.removeTree(home) }
            let ferry = try await Ferry.start(home: home)
            defer { ferry.stopInBackground() }
            let client = ferry.client
            let id = try await ferry.submit(origin.url("/slow.bin"), ["connections": 4])
            try await client.waitForJob(id) { ($0["bytesReceived"] as? Int ?? 0) > 600_000 }
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/pause").status == 200)
            let paused = try await client.waitForJob(id, timeout: 10) { $0["state"] as? String == "paused" }
            let kept = try #require(paused["bytesReceived"] as? Int)
            #expect(kept > 0 && kept < size)
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/resume").status == 200)
            let job = try await ferry.ended(id, timeout: 40)
            #expect(job["state"] as? String == "finished", "\(job)")
            #expect(job["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 62)))
            #expect(job["restarted"] as? Bool != true)
            // One connection (FTP is never split), and the second RETR starts with REST at the bytes kept.
            let deadline = Date().addingTimeInterval(5)
            while origin.retrievals().count < 2, Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
            let retrievals = origin.retrievals()
            #expect(retrievals.map(\.rest) == [0, Int64(kept)], "\(retrievals)")
            #expect(retrievals.last?.sent == Int64(size - kept))
        }
    }

    @Test func ftpServerWhoseSizeOverstatesItsDataFailsClearlyWithoutSplicing() async throws {
        var options = FTPOrigin.Options()
        options.lieSize = 4096
        try await Self.withFTP(options) { origin in
            let size = 200_000
            try Fixture.writeFile(at: origin.root + "/liar.bin", size: size, seed: 63)
            let home = try Fixture.tempDirectory("ferry-home")
            defer { Fixture.removeTree(home) }
            let ferry = try await Ferry.start(home: home)
            defer { ferry.stopInBackground() }
            let id = try await ferry.submit(origin.url("/liar.bin"))
            let job = try await ferry.ended(id, timeout: 60)
            #expect(job["state"] as? String == "failed", "\(job)")
            #expect(Self.errorCode(job) == "network_error")
            #expect(Self.errorMessage(job).contains("the server said the file has \(size + 4096) bytes, but its data ended at \(size)"), "\(job)")
            #expect((job["bytesReceived"] as? Int ?? 0) <= size)
            #expect(try await ferry.client.get("/api/v1/jobs/\(id)/content").status != 200)
            // Every retry continued exactly at the bytes on disk: nothing was written twice or spliced.
            let rests = Set(origin.retrievals().map(\.rest))
            #expect(rests.isSubset(of: [0, Int64(size)]), "\(origin.retrievals())")
        }
    }

    @Test func ftpServerWhoseSizeUnderstatesItsDataFailsClearlyInsteadOfFinishingTruncated() async throws {
        var options = FTPOrigin.Options()
        options.lieSize = -4096
        try await Self.withFTP(options) { origin in
            let size = 300_000
            try Fixture.writeFile(at: origin.root + "/short.bin", size: size, seed: 68)
            let home = try Fixture.tempDirectory("ferry-home")
            defer { Fixture.removeTree(home) }
            let ferry = try await Ferry.start(home: home)
            defer { ferry.stopInBackground() }
            let id = try await ferry.submit(origin.url("/short.bin"))
            let job = try await ferry.ended(id, timeout: 60)
            #expect(job["state"] as? String == "failed", "a truncated file must not finish: \(job)")
            #expect(Self.errorCode(job) == "network_error")
            #expect(Self.errorMessage(job).contains("the server said the file has \(size - 4096) bytes, but sent \(size)"), "\(job)")
            #expect(try await ferry.client.get("/api/v1/jobs/\(id)/content").status != 200)
            // Every attempt (the job is retried) started from zero and read the whole file: bytes judged by a wrong
            // size are never continued (a REST at that size would have taken them for the whole file).
            let retrievals = origin.retrievals()
            #expect(retrievals.count >= 2, "\(retrievals)")
            #expect(retrievals.allSatisfy { $0.rest == 0 && $0.sent == Int64(size) }, "\(retrievals)")
            // No partial file is left that a later start could take for the whole file (removed on giving up).
            let partial = ferry.spool + "/partial/\(id).part"
            let deadline = Date().addingTimeInterval(5)
            while FileManager.default.fileExists(atPath: partial), Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
            #expect(!FileManager.default.fileExists(atPath: partial))
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: ferry.spool + "/files")) ?? []).isEmpty)
        }
    }

    @Test func ftpPASVReplyNamingAnotherAddressIsIgnoredForTheControlConnectionsAddress() async throws {
        var options = FTPOrigin.Options()
        // A documentation address (TEST-NET-1): Ferry's guard would refuse it, and nothing answers there.
        options.masquerade = "192.0.2.7"
        try await Self.withFTP(options) { origin in
            let size = 1024 * 1024 + 9
            try Fixture.writeFile(at: origin.root + "/pasv.bin", size: size, seed: 69)
            let home = try Fixture.tempDirectory("ferry-home")
            defer { Fixture.removeTree(home) }
            let ferry = try await Ferry.start(home: home)
            let id = try await ferry.submit(origin.url("/pasv.bin"))
            let job = try await ferry.ended(id, timeout: 30)
            let log = await ferry.stop()
            #expect(job["state"] as? String == "finished", "\(job)")
            #expect(job["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 69)))
            // The server does name the other address (EPSV refused, PASV answered with 192.0.2.7), as any client sees...
            let probe = """
                import ftplib, sys
                f = ftplib.FTP(); f.connect("127.0.0.1", int(sys.argv[1])); f.login(sys.argv[2], sys.argv[3])
                print(f.sendcmd("PASV"))
                try:
                    f.sendcmd("EPSV")
                except ftplib.error_perm as e:
                    print("EPSV refused:", e)
                f.close()
                """
            let client = try ChildProcess.launch(try FaultOrigin.pythonPath(), ["-c", probe, String(origin.port), options.user, options.password])
            defer { Fixture.removeTree(client.outputDirectory) }
            #expect(await client.exit(within: 20) == 0, "\(client.standardError())")
            #expect(client.standardOutput().contains("(192,0,2,7,"), "\(client.standardOutput())")
            #expect(client.standardOutput().contains("EPSV refused"), "\(client.standardOutput())")
            // ...and the data came over a connection to 127.0.0.1: the guard never had to refuse 192.0.2.7.
            #expect(origin.retrievals().count == 1 && origin.retrievals().first?.complete == true, "\(origin.retrievals())")
            #expect(!log.contains("192.0.2.7"), "\(log.suffix(2000))")
        }
    }

    @Test func ftpsWithAnUntrustedCertificateFailsWithATLSError() async throws {
        let directory = try Fixture.tempDirectory("ferry-ftps-cert")
        defer { Fixture.removeTree(directory) }
        let candidates: [String] = ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        let openssl = try #require(candidates.first { path in access(path, X_OK) == 0 })
        let request = try ChildProcess.launch(openssl, [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-keyout", directory + "/key.pem", "-out", directory + "/cert.pem"], outputDirectory: directory)
        #expect(await request.exit(within: 60) == 0, "\(request.standardError())")
        var options = FTPOrigin.Options()
        options.tls = (certificate: directory + "/cert.pem", key: directory + "/key.pem")
        try await Self.withFTP(options) { origin in
            try Fixture.writeFile(at: origin.root + "/secure.bin", size: 10_000, seed: 64)
            let home = try Fixture.tempDirectory("ferry-home")
            defer { Fixture.removeTree(home) }
            let ferry = try await Ferry.start(home: home)
            defer { ferry.stopInBackground() }
            let id = try await ferry.submit(origin.url("/secure.bin", scheme: "ftps"))
            let job = try await ferry.ended(id, timeout: 20)
            #expect(job["state"] as? String == "failed", "\(job)")
            #expect(Self.errorCode(job) == "network_error")
            #expect(Self.errorMessage(job).lowercased().contains("certificate"), "\(job)")
            #expect(job["url"] as? String == "ftps://***@127.0.0.1:\(origin.port)/secure.bin")
            // It did negotiate TLS (explicit FTPS, AUTH TLS on the FTP port), refused the certificate, and no file was sent.
            #expect(origin.serverLog().contains("SSL handshake failed"), "\(origin.serverLog().suffix(1500))")
            #expect(origin.retrievals().isEmpty)
        }
    }

    @Test func ftpAndSFTPURLsToRefusedAddressesAreRefusedAtSubmit() async throws {
        try await withFerry({ $0.allowPrivateNetworks = false }) { ferry in
            for url in ["ftp://user:pw@127.0.0.1/a.bin", "ftps://10.0.0.1/a", "sftp://[::1]:2222/a", "ftp://0x7f.1/a"] {
                let answer = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
                #expect(answer.status == 403, "\(url)")
                #expect((try answer.json()["error"] as? [String: Any])?["code"] as? String == "forbidden_destination", "\(url)")
                #expect(!String(decoding: answer.body, as: UTF8.self).contains("pw"), "\(url)")
            }
            for url in ["file:///etc/passwd", "scp://example.com/a", "tftp://example.com/a"] {
                let answer = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url])
                #expect(answer.status == 400, "\(url)")
                #expect((try answer.json()["error"] as? [String: Any])?["code"] as? String == "unsupported_scheme", "\(url)")
            }
        }
    }

    // MARK: SFTP

    @Test func sftpDownloadWithAKnownHostKeyIsByteIdentical() async throws {
        try await Self.withSSH { ssh in
            let size = 2 * 1024 * 1024 + 5
            try Fixture.writeFile(at: ssh.root + "/data.bin", size: size, seed: 65)
            // No --ssh-known-hosts: the default, ~/.ssh/known_hosts of Ferry's HOME, holds the server's key.
            let ferry = try await Ferry.start(home: ssh.home)
            var log = ""
            do {
                let id = try await ferry.submit(ssh.url("data.bin"))
                let job = try await ferry.ended(id)
                #expect(job["state"] as? String == "finished", "\(job) \(ssh.serverLog().suffix(1500))")
                #expect(job["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 65)))
                #expect(job["bytesExpected"] as? Int == size)
                #expect(job["url"] as? String == "sftp://***@127.0.0.1:\(ssh.port)\(ssh.root)/data.bin")
            } catch {
                log = await ferry.stop()
                throw error
            }
            log = await ferry.stop()
            #expect(!log.contains("\(ssh.user)@127.0.0.1"), "Ferry's log shows the SFTP user name")
        }
    }

    /// A TCP relay on a free 127.0.0.1 port to `port`, appending the bytes it carried towards the client to
    /// `log` (one line per connection, when it closes): how the test measures what the server sent.
    static func countingRelay(to port: Int, log: String) async throws -> (process: ChildProcess, port: Int) {
        let script = """
            import socket, sys, threading
            listen, target, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
            lock = threading.Lock()
            def pipe(a, b, counted):
                total = 0
                try:
                    while True:
                        data = a.recv(65536)
                        if not data:
                            break
                        b.sendall(data)
                        total += len(data)
                except OSError:
                    pass
                for s in (a, b):
                    try: s.shutdown(socket.SHUT_RDWR)
                    except OSError: pass
                if counted:
                    with lock, open(log, "a") as f:
                        f.write("%d\\n" % total)
            s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", listen)); s.listen(16)
            while True:
                c, _ = s.accept()
                u = socket.create_connection(("127.0.0.1", target))
                threading.Thread(target=pipe, args=(c, u, False), daemon=True).start()
                threading.Thread(target=pipe, args=(u, c, True), daemon=True).start()
            """
        let relayPort = try RestartTests.freePort()
        let process = try ChildProcess.launch(try FaultOrigin.pythonPath(), ["-c", script, String(relayPort), String(port), log])
        _ = await pollUntil(timeout: 10) { LoopbackSocket.accepts(port: relayPort) ? true : nil }
        return (process, relayPort)
    }

    @Test func sftpResumeAfterPauseContinuesFromTheBytesKept() async throws {
        try await Self.withSSH { ssh in
            let size = 3 * 1024 * 1024 + 11
            try Fixture.writeFile(at: ssh.root + "/slow.bin", size: size, seed: 70)
            let relayLog = ssh.directory + "/relay.log"
            let relay = try await Self.countingRelay(to: ssh.port, log: relayLog)
            defer { relay.process.stopInBackground(grace: 1) { Fixture.removeTree(relay.process.outputDirectory) } }
            // The relay is the server Ferry sees: its known-hosts entry names the relay's port.
            let knownHosts = ssh.directory + "/relay_known_hosts"
            let key = ssh.knownHostsLine.split(separator: " ").dropFirst().joined(separator: " ")
            try "[127.0.0.1]:\(relay.port) \(key)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let ferry = try await Ferry.start(home: ssh.home, arguments: ["--ssh-known-hosts", knownHosts])
            var stopped = false
            defer { if !stopped { ferry.stopInBackground() } }
            let client = ferry.client
            let url = "sftp://\(ssh.user)@127.0.0.1:\(relay.port)\(ssh.root)/slow.bin"
            let id = try await ferry.submit(url, ["maxBytesPerSecond": 1_000_000])
            try await client.waitForJob(id, timeout: 20) { ($0["bytesReceived"] as? Int ?? 0) > 800_000 }
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/pause").status == 200)
            let paused = try await client.waitForJob(id, timeout: 10) { $0["state"] as? String == "paused" }
            let kept = try #require(paused["bytesReceived"] as? Int)
            #expect(kept > 0 && kept < size)
            #expect(try await client.request("POST", "/api/v1/jobs/\(id)/resume").status == 200)
            let job = try await ferry.ended(id, timeout: 40)
            #expect(job["state"] as? String == "finished", "\(job) \(ssh.serverLog().suffix(1000))")
            #expect(job["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: size, seed: 70)))
            #expect(job["restarted"] as? Bool != true)
            // libcurl keeps the last connection in its cache: stopping Ferry closes it, and the relay logs it.
            _ = await ferry.stop()
            stopped = true
            let deadline = Date().addingTimeInterval(10)
            var sent: [Int] = []
            while Date() < deadline {
                // (The relay's start-up probe is a connection that carried nothing.)
                sent = ((try? String(contentsOfFile: relayLog, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int($0) }.filter { $0 > 0 }
                if sent.count >= 2 { break }
                try await Task.sleep(nanoseconds: 50_000_000)
            }
            #expect(sent.count == 2, "one connection before the pause, one after: \(sent)")
            // After the resume the server sent the rest from the bytes kept (plus SSH's own bytes), not the file again.
            #expect(sent.contains { $0 >= size - kept && $0 < size - kept + 256 * 1024 }, "sent \(sent) bytes, resuming at \(kept) of \(size)")
            #expect(sent.reduce(0, +) < 2 * size, "\(sent)")
        }
    }

    @Test func sftpWithAnUnknownHostKeyFailsWithHostKeyUnknown() async throws {
        try await Self.withSSH { ssh in
            try Fixture.writeFile(at: ssh.root + "/data.bin", size: 10_000, seed: 66)
            let knownHosts = ssh.directory + "/empty_known_hosts"
            try "".write(toFile: knownHosts, atomically: true, encoding: .utf8)
            let ferry = try await Ferry.start(home: ssh.home, arguments: ["--ssh-known-hosts", knownHosts])
            defer { ferry.stopInBackground() }
            let id = try await ferry.submit(ssh.url("data.bin"))
            let job = try await ferry.ended(id)
            #expect(job["state"] as? String == "failed", "\(job)")
            #expect(Self.errorCode(job) == "host_key_unknown")
            #expect(Self.errorMessage(job).contains("is not in \(knownHosts)"), "\(job)")
            #expect(!ssh.serverLog().contains("Accepted publickey"), "Ferry logged in to a server it does not know")
        }
    }

    @Test func sftpWithAChangedHostKeyFailsWithHostKeyUnknown() async throws {
        try await Self.withSSH { ssh in
            try Fixture.writeFile(at: ssh.root + "/data.bin", size: 10_000, seed: 67)
            let knownHosts = ssh.directory + "/changed_known_hosts"
            try await (try ssh.otherHostKeyLine() + "\n").write(toFile: knownHosts, atomically: true, encoding: .utf8)
            // The environment twin this time.
            let ferry = try await Ferry.start(home: ssh.home, environment: ["FERRY_SSH_KNOWN_HOSTS": knownHosts])
            defer { ferry.stopInBackground() }
            let id = try await ferry.submit(ssh.url("data.bin"))
            let job = try await ferry.ended(id)
            #expect(job["state"] as? String == "failed", "\(job)")
            #expect(Self.errorCode(job) == "host_key_unknown")
            #expect(Self.errorMessage(job).contains("differs from the one in \(knownHosts)"), "\(job)")
            #expect(!ssh.serverLog().contains("Accepted publickey"), "Ferry logged in to a server whose key changed")
        }
    }
}
