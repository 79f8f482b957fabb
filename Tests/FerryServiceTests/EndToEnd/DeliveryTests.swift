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
                let events = try await ferry.client.events("/api/v1/events?interval=100")
                let created = try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/out.bin"), "maxBytesPerSecond": 6_000_000,
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
                #expect(phases.contains("downloading"))
                #expect(phases.contains("delivering"), "\(phases)")
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
