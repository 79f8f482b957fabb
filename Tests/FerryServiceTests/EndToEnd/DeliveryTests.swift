import FerryTestSupport
import Foundation
import Testing

/// Onward delivery end to end (API.md, "Onward delivery"): a real Ferry downloads from nginx and uploads the
/// finished file to nginx's WebDAV `PUT` (`/upload/`) or to a target that refuses it (`/refuse-upload/`, 403).
@Suite("Onward delivery")
struct DeliveryTests {
    @Test func aFileIsDownloadedThenPutToTheTargetWithUploadProgress() async throws {
        try await withNginx { nginx in
            let size = 3_000_000
            try Fixture.writeFile(at: nginx.root + "/out.bin", size: size, seed: 51)
            let digest = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 51))
            let ferry = try await RunningFerry.start()
            do {
                // 2 MB/s: the upload lasts 1.5 s, several progress intervals even when a loaded machine reads the
                // stream late (a slow reader's pending progress is coalesced into the job's terminal event).
                let events = try await ferry.client.events("/api/v1/events?interval=100")
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/out.bin"), "maxBytesPerSecond": 2_000_000,
                    "deliver": ["url": nginx.url("/upload/sub/out.bin"), "headers": ["X-Trace": "t1"]],
                ])
                #expect(created.status == 201)
                let job = try created.json()
                let id = try #require(job["id"] as? String)
                let delivery = try #require(job["delivery"] as? [String: Any])
                #expect(delivery["state"] as? String == "pending")
                #expect(delivery["method"] as? String == "PUT")

                let finished = try await ferry.client.waitForJob(id) { $0["state"] as? String == "finished" }
                let done = try #require(finished["delivery"] as? [String: Any])
                #expect(done["state"] as? String == "delivered")
                #expect(done["httpStatus"] as? Int == 201)
                #expect(done["bytesSent"] as? Int == size)
                #expect(done["bytesTotal"] as? Int == size)
                #expect(done["progress"] as? Double == 1)
                #expect(done["deliveredAt"] is String)
                #expect(done["attempts"] as? Int == 1)
                #expect(finished["sha256"] as? String == digest)
                let uploaded = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/upload/sub/out.bin"))
                #expect(uploaded.count == size)
                #expect(Fixture.sha256Hex(of: Array(uploaded)) == digest)
                // The file stays served here (no deleteAfter).
                #expect(try await ferry.client.get("/api/v1/jobs/\(id)/content").status == 200)

                let seen = try await events.collect(timeout: 20) { event in
                    event.event == "job" && event.data.contains("\"state\":\"finished\"")
                }
                let states = seen.filter { $0.event == "job" }.compactMap { try? $0.json()["state"] as? String }
                #expect(states.contains("delivering"))
                let phases = seen.filter { $0.event == "progress" }.compactMap { try? $0.json()["phase"] as? String }
                // What the stream carried, in order, should progress be missing (seen once in a busy run, not yet
                // reproduced: job events came, no progress at all).
                let carried = seen.map { "\($0.event)#\($0.id ?? "-")" }.joined(separator: " ")
                #expect(phases.contains("downloading"), "\(carried)")
                #expect(phases.contains("delivering"), "\(phases); \(carried)")
                let upload = seen.filter { $0.event == "progress" }.compactMap { try? $0.json() }
                    .first { $0["phase"] as? String == "delivering" }
                #expect(upload?["bytesTotal"] as? Int == size)
                #expect(upload?["bytesSent"] is Int)
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
        }
    }

    @Test func aRefusingTargetFailsWithDeliveryFailedAndResumeOnlyDeliversAgain() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/r.bin", size: 200_000, seed: 52)
            let ferry = try await RunningFerry.start()
            do {
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/r.bin"), "deliver": ["url": nginx.url("/refuse-upload/r.bin")],
                ])
                let id = try #require(try created.json()["id"] as? String)
                let failed = try await ferry.client.waitForJob(id) { $0["state"] as? String == "failed" }
                let error = try #require(failed["error"] as? [String: Any])
                #expect(error["code"] as? String == "delivery_failed")
                #expect(error["httpStatus"] as? Int == 403)
                let delivery = try #require(failed["delivery"] as? [String: Any])
                #expect(delivery["state"] as? String == "failed")
                #expect(delivery["httpStatus"] as? Int == 403)
                #expect(failed["sha256"] is String, "the file was downloaded and kept")

                let downloadsBefore = nginx.accessLog().filter { $0.path == "/r.bin" }.count
                let resumed = try await ferry.client.request("POST", "/api/v1/jobs/\(id)/resume")
                #expect(resumed.status == 200)
                // Delivering again at once (or failed again already: the target answers fast).
                #expect(["delivering", "failed"].contains(try resumed.json()["state"] as? String ?? ""))
                let again = try await ferry.client.waitForJob(id) { $0["state"] as? String == "failed" }
                #expect((again["error"] as? [String: Any])?["code"] as? String == "delivery_failed")
                #expect(nginx.accessLog().filter { $0.path == "/r.bin" }.count == downloadsBefore, "resume did not download again")
                #expect(nginx.accessLog().filter { $0.path == "/refuse-upload/r.bin" }.count == 2)
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
        }
    }

    @Test func deleteAfterRemovesTheLocalFileAndContentIsGone() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/d.bin", size: 100_000, seed: 53)
            let ferry = try await RunningFerry.start()
            do {
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/d.bin"), "deliver": ["url": nginx.url("/upload/d.bin"), "deleteAfter": true],
                ])
                let id = try #require(try created.json()["id"] as? String)
                let finished = try await ferry.client.waitForJob(id) { $0["state"] as? String == "finished" }
                #expect((finished["delivery"] as? [String: Any])?["state"] as? String == "delivered")
                let content = try await ferry.client.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 410)
                #expect((try content.json()["error"] as? [String: Any])?["code"] as? String == "gone")
                #expect(FileManager.default.fileExists(atPath: nginx.root + "/upload/d.bin"))
                #expect(try FileManager.default.contentsOfDirectory(atPath: ferry.spool + "/files").isEmpty)
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
        }
    }

    @Test func aNonPublicTargetIsRefusedLikeAnOrigin() async throws {
        let ferry = try await RunningFerry.start { $0.allowPrivateNetworks = false }
        do {
            for target in ["http://10.0.0.1/up", "http://127.1/up", "http://[::1]/up", "http://localhost/up"] {
                let answer = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": "https://example.com/f.bin", "deliver": ["url": target],
                ])
                #expect(answer.status == 403, "\(target)")
                #expect((try answer.json()["error"] as? [String: Any])?["code"] as? String == "forbidden_destination", "\(target)")
            }
        } catch {
            await ferry.stop()
            throw error
        }
        await ferry.stop()
    }

    @Test func invalidDeliveriesAreRefusedAtSubmit() async throws {
        let ferry = try await RunningFerry.start()
        do {
            let url = "https://example.com/f.bin"
            for (deliver, code) in [
                (["method": "PUT"] as [String: Any], "invalid_request"),
                (["url": "ftp://x.example/f"], "unsupported_scheme"),
                (["url": "https://t.example/u", "method": "PATCH"], "invalid_request"),
                (["url": "https://t.example/u", "fields": ["a": "b"]], "invalid_request"),
                (["url": "https://t.example/u", "headers": ["Content-Length": "1"]], "invalid_request"),
            ] {
                let answer = try await ferry.client.json("POST", "/api/v1/jobs", ["url": url, "deliver": deliver])
                #expect(answer.status == 400, "\(deliver)")
                #expect((try answer.json()["error"] as? [String: Any])?["code"] as? String == code, "\(deliver)")
            }
        } catch {
            await ferry.stop()
            throw error
        }
        await ferry.stop()
    }
}

/// A `multipart/form-data` receiver on loopback (Python's http.server): keeps each POST's body and content type
/// in `dir/received-N` and answers 201.
struct MultipartReceiver {
    let process: ChildProcess
    let port: Int
    let directory: String

    static let script = """
        import http.server, sys, os
        directory = sys.argv[2]
        class Handler(http.server.BaseHTTPRequestHandler):
            count = 0
            def do_POST(self):
                length = int(self.headers.get('Content-Length', '0'))
                body = self.rfile.read(length)
                Handler.count += 1
                with open(os.path.join(directory, 'received-%d' % Handler.count), 'wb') as f:
                    f.write(self.headers.get('Content-Type', '').encode() + b'\\n' + body)
                self.send_response(201)
                self.send_header('Content-Length', '0')
                self.end_headers()
            def log_message(self, *args):
                pass
        http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), Handler).serve_forever()
        """

    static func start() async throws -> MultipartReceiver {
        let port = try LoopbackSocket.freePort()
        let directory = try Fixture.tempDirectory("ferry-multipart")
        let process = try ChildProcess.launch("/usr/bin/python3", ["-c", script, String(port), directory])
        guard await pollUntil(timeout: 10, { LoopbackSocket.accepts(port: port) ? true : nil }) != nil else {
            _ = await process.stopped()
            throw FixtureError.timedOut("the multipart receiver did not listen: \(process.standardError())")
        }
        return MultipartReceiver(process: process, port: port, directory: directory)
    }

    /// SIGTERM now; SIGKILL after 1 s and the directory's removal on a thread of their own. Returns at once.
    func stop() {
        let directory = directory
        process.stopInBackground(grace: 1) { Fixture.removeTree(directory) }
    }

    func received() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: directory + "/received-1"))) }
}

@Suite("Onward delivery, multipart POST")
struct MultipartDeliveryTests {
    @Test func aPostCarriesTheTextFieldsThenTheFileInItsPart() async throws {
        try await withNginx { nginx in
            let size = 200_000
            try Fixture.writeFile(at: nginx.root + "/m.bin", size: size, seed: 54)
            let receiver = try await MultipartReceiver.start()
            defer { receiver.stop() }
            let ferry = try await RunningFerry.start()
            do {
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/m.bin"),
                    "deliver": ["url": "http://127.0.0.1:\(receiver.port)/in", "method": "POST", "field": "upload",
                                "fields": ["note": "from ferry"]],
                ])
                let id = try #require(try created.json()["id"] as? String)
                let finished = try await ferry.client.waitForJob(id) { ["finished", "failed"].contains($0["state"] as? String ?? "") }
                #expect(finished["state"] as? String == "finished", "\(finished)")
                #expect((finished["delivery"] as? [String: Any])?["httpStatus"] as? Int == 201)
                let body = try receiver.received()
                let text = String(decoding: body, as: UTF8.self)
                #expect(text.hasPrefix("multipart/form-data; boundary="))
                #expect(text.contains("name=\"note\"\r\n\r\nfrom ferry\r\n"))
                #expect(text.contains("name=\"upload\"; filename=\"m.bin\""))
                let content = Fixture.content(size: size, seed: 54)
                let notePart = try #require(text.range(of: "name=\"note\""))
                let filePart = try #require(text.range(of: "name=\"upload\""))
                #expect(notePart.lowerBound < filePart.lowerBound, "the text fields come before the file")
                #expect(body.count > size)
                #expect(Self.contains(body, content), "the file's bytes are in the body whole")
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return false }
        var i = 0
        while i + needle.count <= haystack.count {
            if haystack[i] == first, Array(haystack[i..<(i + needle.count)]) == needle { return true }
            i += 1
        }
        return false
    }
}

@Suite("Onward delivery across a restart")
struct DeliveryRestartTests {
    @Test func aDeliveryInterruptedByAStopIsSentAgainFromTheFirstByte() async throws {
        try await withNginx { nginx in
            let size = 2_000_000
            try Fixture.writeFile(at: nginx.root + "/again.bin", size: size, seed: 55)
            let digest = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 55))
            let spool = try Fixture.tempDirectory("ferry-delivery-restart")
            defer { Fixture.removeTree(spool) }
            let first = try await RunningFerry.start(spool: spool)
            let id: String
            do {
                // The job's limit paces the upload too: about 2 s of it, stopped in the middle.
                let created = try await first.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/again.bin"), "maxBytesPerSecond": 1_000_000,
                    "deliver": ["url": nginx.url("/upload/again.bin")],
                ])
                id = try #require(try created.json()["id"] as? String)
                let sending = try await first.client.waitForJob(id) {
                    (($0["delivery"] as? [String: Any])?["bytesSent"] as? Int ?? 0) > 0
                }
                #expect(sending["state"] as? String == "delivering")
            } catch {
                await first.stop()
                throw error
            }
            await first.stop()

            let second = try await RunningFerry.start(spool: spool)
            do {
                let finished = try await second.client.waitForJob(id, timeout: 30) { $0["state"] as? String == "finished" }
                let delivery = try #require(finished["delivery"] as? [String: Any])
                #expect(delivery["state"] as? String == "delivered")
                #expect(delivery["bytesSent"] as? Int == size)
                let uploaded = try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/upload/again.bin"))
                #expect(Fixture.sha256Hex(of: Array(uploaded)) == digest)
                #expect(nginx.accessLog().filter { $0.path == "/again.bin" }.count == 1, "downloaded once")
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }
    /// A stop that comes while the target is taking its time to answer a delivery whose body is all sent waits for
    /// that answer: the delivery is recorded and not sent again after the restart (the seam suite saw a 503-then-201
    /// target take the file twice across a SIGTERM).
    @Test func aStopWaitsForTheAnswerToADeliveryAlreadySent() async throws {
        try await withFaultOrigin { origin in
            let size = 200_000
            let key = "answer-\(UUID().uuidString)"
            let source = origin.url("/f/\(key).bin?size=\(size)&seed=57")
            let target = origin.url("/u/\(key).bin?answer_after=1")
            let spool = try Fixture.tempDirectory("ferry-delivery-answer")
            defer { Fixture.removeTree(spool) }
            let first = try await RunningFerry.start(spool: spool)
            let id: String
            do {
                let created = try await first.client.json("POST", "/api/v1/jobs", ["url": source, "deliver": ["url": target]])
                id = try #require(try created.json()["id"] as? String)
                // The body is all read once the target logs nothing yet but the job has sent every byte.
                try await first.client.waitForJob(id) {
                    (($0["delivery"] as? [String: Any])?["bytesSent"] as? Int ?? 0) == size
                }
            } catch {
                await first.stop()
                throw error
            }
            await first.stop()
            let second = try await RunningFerry.start(spool: spool)
            do {
                let job = try await second.client.waitForJob(id, timeout: 20) { $0["state"] as? String == "finished" }
                #expect((job["delivery"] as? [String: Any])?["state"] as? String == "delivered")
                try await Task.sleep(nanoseconds: 1_500_000_000)  // a second PUT would have begun by now
                let uploads = await origin.uploads().filter { $0.path.hasPrefix("/u/\(key)") }
                #expect(uploads.count == 1, "\(uploads.map { ($0.status ?? 0, $0.complete) })")
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }

    /// A failed delivery keeps its file and stays `failed` across a restart: the spool's finish record of its
    /// download is not taken for a file finished just before the stop (it was turned into `finished` once).
    @Test func aFailedDeliveryStaysFailedAcrossARestart() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/kept.bin", size: 300_000, seed: 56)
            let spool = try Fixture.tempDirectory("ferry-delivery-failed-restart")
            defer { Fixture.removeTree(spool) }
            let first = try await RunningFerry.start(spool: spool)
            let id: String
            do {
                let created = try await first.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/kept.bin"), "deliver": ["url": nginx.url("/refuse-upload/kept.bin")],
                ])
                id = try #require(try created.json()["id"] as? String)
                let failed = try await first.client.waitForJob(id) { $0["state"] as? String == "failed" }
                #expect((failed["error"] as? [String: Any])?["code"] as? String == "delivery_failed")
            } catch {
                await first.stop()
                throw error
            }
            await first.stop()

            let logs = LogCapture()
            let second = try await RunningFerry.start(spool: spool, logs: logs)
            do {
                let job = try await second.client.get("/api/v1/jobs/\(id)").json()
                #expect(job["state"] as? String == "failed")
                #expect((job["error"] as? [String: Any])?["code"] as? String == "delivery_failed")
                #expect((job["delivery"] as? [String: Any])?["state"] as? String == "failed")
                #expect(!logs.messages.contains { $0.contains("adopted a file") }, "\(logs.messages)")
                // The file is still kept: resume delivers again (and is refused again) without downloading.
                let resumed = try await second.client.request("POST", "/api/v1/jobs/\(id)/resume")
                #expect(resumed.status == 200)
                let deadline = Date().addingTimeInterval(20)
                while nginx.accessLog().filter({ $0.path == "/refuse-upload/kept.bin" }).count < 2, Date() < deadline {
                    try await Task.sleep(nanoseconds: 50_000_000)
                }
                let again = try await second.client.waitForJob(id) { $0["state"] as? String == "failed" }
                #expect((again["error"] as? [String: Any])?["code"] as? String == "delivery_failed")
                #expect(nginx.accessLog().filter { $0.path == "/refuse-upload/kept.bin" }.count == 2)
                #expect(nginx.accessLog().filter { $0.path == "/kept.bin" }.count == 1, "downloaded once")
            } catch {
                await second.stop()
                throw error
            }
            await second.stop()
        }
    }
}
