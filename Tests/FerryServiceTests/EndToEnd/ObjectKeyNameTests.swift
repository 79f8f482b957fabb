import FerryEngine
import FerryTestSupport
import Foundation
import Testing

/// A finished job's `filename` is the last part of its object's key, also when the name it was given is taken in
/// the spool of the node that runs it by then (issue 23): on several nodes, the name a job brings from the node that
/// named it; here, a file put into `files/` under that name while the job was paused. Before, the key kept the
/// first name and the link into `files/` renamed the file, so the job named an object that did not exist and its
/// content answered 404 once the local copy was gone. Also: a file of one part is stored with one `PutObject`.
@Suite("Object key and filename", .serialized, .enabled(if: !SeaweedServer.isSkipped))
struct ObjectKeyNameTests {
    @Test func aNameTakenWhenTheDownloadStartsNamesTheJobAndItsObjectAlike() async throws {
        ObjectStoreTests.keysSet
        let server = try await SeaweedServer.shared()
        let location = await ObjectStoreTests.location(server, bucket: try server.createBucket())
        try await withNginx { nginx in
            let size = 300_000
            try Fixture.writeFile(at: nginx.root + "/origin.bin", size: size, seed: 23)
            let expected = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 23))
            try await withFerry({ $0.objectStore = location }) { ferry in
                let client = ferry.client
                let created = try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/origin.bin"), "filename": "named.bin",
                                                                             "paused": true])
                let id = try #require(try created.json()["id"] as? String, "\(created.status) \(created.text)")
                #expect(try created.json()["filename"] as? String == "named.bin")
                // The name is taken in this node's files/ before the download starts.
                try Data("someone else's".utf8).write(to: URL(fileURLWithPath: ferry.spool + "/files/named.bin"))
                #expect(try await client.request("POST", "/api/v1/jobs/\(id)/resume").status == 200)
                let finished = try await client.waitForJob(id, timeout: 60) { ["finished", "failed"].contains($0["state"] as? String) }
                #expect(finished["state"] as? String == "finished", "\(finished)")
                let filename = try #require(finished["filename"] as? String)
                #expect(filename == "named (1).bin")

                let key = try ObjectStoreLocation(parsing: location).key(jobID: id, filename: filename)
                try await ObjectStoreTests.withInspector(location) { inspector in
                    let info = try await inspector.headObject(key: key)
                    #expect(info.size == Int64(size) && info.metadata["sha256"] == expected)
                    let others = try await inspector.unfinishedUploads(prefix: try ObjectStoreLocation(parsing: location).keyPrefix(jobID: id))
                    #expect(others.isEmpty)
                }
                #expect(try String(contentsOfFile: ferry.spool + "/files/named.bin", encoding: .utf8) == "someone else's")
                // Served from the object the job names, not the spool's copy.
                try FileManager.default.removeItem(atPath: ferry.spool + "/files/" + filename)
                let content = try await client.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 200 && Fixture.sha256Hex(of: content.body) == expected, "\(content.status)")

                // One part: one PutObject, no multipart upload and no sweep for unfinished ones.
                let metrics = try await client.get("/metrics").text
                #expect(metrics.contains("ferry_object_store_requests_total{operation=\"PutObject\"} 1"), "\(metrics)")
                #expect(!metrics.contains("operation=\"CreateMultipartUpload\""), "\(metrics)")
                #expect(!metrics.contains("operation=\"ListMultipartUploads\""), "\(metrics)")
            }
        }
    }
}
