import FerryService
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// A Ferry service on a PostgreSQL store (`--store postgres://...`), on the test run's PostgreSQL server with a
/// database of its own. Left out only with `FERRY_SKIP_POSTGRES=1`.
@Suite("PostgreSQL store, end to end", .enabled(if: !PostgresServer.isSkipped))
struct PostgresStoreTests {
    @Test func aJobFinishesAndIsStillListedAfterARestart() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        defer { server.dropDatabase(database) }
        let location = try #require(PostgresLocation(server.url(database: database)))
        try await withNginx { nginx in
            let size = 300_000
            try Fixture.writeFile(at: nginx.root + "/kept.bin", size: size, seed: 41)
            let digest = Fixture.sha256Hex(of: Fixture.content(size: size, seed: 41))
            let spool = try Fixture.tempDirectory("ferry-postgres-store")
            defer { Fixture.removeTree(spool) }

            let ferry = try await RunningFerry.start(spool: spool) { $0.store = .postgres(location) }
            let id: String
            do {
                let created = try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/kept.bin"), "tags": ["pg"]])
                #expect(created.status == 201)
                id = try #require(try created.json()["id"] as? String)
                let finished = try await ferry.client.waitForJob(id) { $0["state"] as? String == "finished" }
                #expect(finished["sha256"] as? String == digest)
            } catch {
                await ferry.stop()
                throw error
            }
            await ferry.stop()
            #expect(!FileManager.default.fileExists(atPath: spool + "/ferry.db"), "the jobs are in PostgreSQL, not in the spool")

            let again = try await RunningFerry.start(spool: spool) { $0.store = .postgres(location) }
            do {
                let listed = try await again.client.get("/api/v1/jobs").json()["jobs"] as? [[String: Any]] ?? []
                #expect(listed.map { $0["id"] as? String } == [id])
                #expect(listed.first?["state"] as? String == "finished")
                #expect(listed.first?["sha256"] as? String == digest)
                // Tag and text filters are answered by the PostgreSQL store.
                let filtered = try await again.client.get("/api/v1/jobs?tag=pg&q=KEPT.BIN").json()["jobs"] as? [[String: Any]] ?? []
                #expect(filtered.map { $0["id"] as? String } == [id])
                let content = try await again.client.get("/api/v1/jobs/\(id)/content")
                #expect(content.status == 200)
                #expect(content.body.count == size)
            } catch {
                await again.stop()
                throw error
            }
            await again.stop()
        }
    }

    @Test func anUnreachableServerFailsTheStartNamingItWithoutThePassword() async throws {
        let port = try RestartTests.freePort()
        let location = try #require(PostgresLocation("postgres://ferry:hunter2@127.0.0.1:\(port)/jobs?connect_timeout=2"))
        do {
            let ferry = try await RunningFerry.start { $0.store = .postgres(location) }
            await ferry.stop()
            Issue.record("Ferry started on a PostgreSQL server that is not there")
        } catch {
            let message = "\(error)"
            #expect(message.contains("PostgreSQL") && message.contains("127.0.0.1:\(port)"), "\(message)")
            #expect(!message.contains("hunter2"), "\(message)")
            #expect(!message.contains("\n"), "one line: \(message)")
        }
    }
}
