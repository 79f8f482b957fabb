import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// Start-up recovery from what a crash can leave in the spool.
@Suite("Recovery, end to end")
struct RecoveryTests {
    @Test func aFileFinishedJustBeforeACrashIsAdoptedNotDownloadedAgain() async throws {
        let spool = try Fixture.tempDirectory("ferry-adopt")
        defer { Fixture.removeTree(spool) }
        // What a crash between the engine's move into files/ and the store's `finished` leaves: the job
        // still downloading in the store, the file in files/, and the spool's finish record.
        let store = try await SQLiteJobStore(path: spool + "/ferry.db")
        var job = JobRecord(id: "adopt1", url: "http://127.0.0.1:9/x.bin", state: .downloading, dedupeKey: "k", createdAt: Date())
        job.bytesReceived = 3
        _ = try await store.insert([job])
        await store.close()
        for directory in ["partial", "files"] {
            try FileManager.default.createDirectory(atPath: spool + "/" + directory, withIntermediateDirectories: true)
        }
        let bytes = Fixture.content(size: 3000, seed: 12)
        let sha = Fixture.sha256Hex(of: bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: spool + "/files/x.bin"))
        try Data("ferry-finish 1\nname x.bin\nsize 3000\nsha256 \(sha)\n".utf8).write(to: URL(fileURLWithPath: spool + "/partial/adopt1.done"))

        let ferry = try await RunningFerry.start(spool: spool)
        do {
            let adopted = try await ferry.client.get("/api/v1/jobs/adopt1").json()
            #expect(adopted["state"] as? String == "finished")
            #expect(adopted["sha256"] as? String == sha)
            #expect(adopted["filename"] as? String == "x.bin")
            let content = try await ferry.client.get("/api/v1/jobs/adopt1/content")
            #expect(content.status == 200)
            #expect(Fixture.sha256Hex(of: content.body) == sha)
            #expect(!FileManager.default.fileExists(atPath: spool + "/partial/adopt1.done"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: spool + "/files") == ["x.bin"])
        } catch {
            await ferry.stop()
            throw error
        }
        await ferry.stop()
    }

    @Test func aFinishRecordWhoseFileIsGoneIsDroppedAndTheJobResumes() async throws {
        let spool = try Fixture.tempDirectory("ferry-adopt-gone")
        defer { Fixture.removeTree(spool) }
        let store = try await SQLiteJobStore(path: spool + "/ferry.db")
        let job = JobRecord(id: "gone1", url: "http://127.0.0.1:9/y.bin", state: .paused, dedupeKey: "k", createdAt: Date())
        _ = try await store.insert([job])
        await store.close()
        try FileManager.default.createDirectory(atPath: spool + "/partial", withIntermediateDirectories: true)
        try Data("ferry-finish 1\nname y.bin\nsize 10\nsha256 \(String(repeating: "d", count: 64))\n".utf8)
            .write(to: URL(fileURLWithPath: spool + "/partial/gone1.done"))
        let ferry = try await RunningFerry.start(spool: spool)
        let state = try await ferry.client.get("/api/v1/jobs/gone1").json()["state"] as? String
        let recordLeft = FileManager.default.fileExists(atPath: spool + "/partial/gone1.done")
        await ferry.stop()
        #expect(state == "paused")
        #expect(!recordLeft)
    }
}
