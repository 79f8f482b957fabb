import FerryCore
import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// What only `PostgresJobStore` does, beyond the contract: migrations recorded once, a newer schema refused, data
/// kept across connections, a connection the server closed replaced, SQLSTATEs carried in errors, odd text kept.
@Suite("PostgresJobStore", .enabled(if: !PostgresServer.isSkipped))
struct PostgresJobStoreTests {
    /// A fresh database on the test run's server, dropped afterwards.
    private func withDatabase(_ body: (PostgresServer, String, PostgresLocation) async throws -> Void) async throws {
        let server = try await PostgresServer.shared()
        let name = try await server.createDatabase()
        defer { server.dropDatabase(name) }
        try await body(server, name, try #require(PostgresLocation(server.url(database: name))))
    }

    @Test func migrationsRunOnceAndJobsOutliveTheConnection() async throws {
        try await withDatabase { _, _, location in
            let store = try await PostgresJobStore(location: location)
            #expect(try await store.schemaVersion() == PostgresSchema.currentVersion)
            _ = try await store.insert([.makeFull("a"), .make("b", tags: ["t"])])
            try await store.saveSettings(StoredSettings(maxConcurrent: 3))
            await store.close()

            let reopened = try await PostgresJobStore(location: location)
            #expect(try await reopened.schemaVersion() == PostgresSchema.currentVersion)
            #expect(try await reopened.all().map(\.id) == ["a", "b"])
            #expect(try await reopened.list(JobFilter(tag: "t"), after: nil, limit: 10).jobs.map(\.id) == ["b"])
            #expect(try await reopened.settings().maxConcurrent == 3)
            // The sequence continues: never reused across connections.
            #expect(try await reopened.insert([.make("c")]).first?.sequence == 3)
            await reopened.close()
        }
    }

    @Test func searchUsesATrigramIndexWhenTheServerOffersPgTrgm() async throws {
        try await withDatabase { server, name, location in
            let store = try await PostgresJobStore(location: location)
            _ = try await store.insert((0..<300).map { JobRecord.make("j\($0)", filename: $0 == 123 ? "Needle.iso" : "hay-\($0).bin") })
            #expect(try await store.list(JobFilter(text: "needle"), after: nil, limit: 10).jobs.map(\.id) == ["j123"])
            await store.close()
            // The test server has pg_trgm (Debian's server package ships it): the index must be there.
            try await server.administer("""
                DO $$ BEGIN
                    IF NOT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'jobs_search_text_trigram') THEN
                        RAISE EXCEPTION 'no trigram index';
                    END IF;
                END $$
                """, database: name)
        }
    }

    /// Figures to compare with `SQLiteJobStoreTests.twoThousandJobsInsertAndUpdate` (the test server runs with
    /// `fsync=off`, so they show round trips and statement costs, not disk syncs).
    @Test func twoThousandJobsInsertUpdateAndGroupCommit() async throws {
        try await withDatabase { _, _, location in
            let store = try await PostgresJobStore(location: location)
            let count = 2000
            let clock = ContinuousClock()
            var inserted: [JobRecord] = []
            let insertTime = try await clock.measure { inserted = try await store.insert((0..<count).map { JobRecord.make("job-\($0)") }) }
            #expect(inserted.count == count)
            let updateTime = try await clock.measure {
                for var job in inserted {
                    job.state = .downloading
                    job.bytesReceived = 1000
                    try await store.update(job)
                }
            }
            let groupTime = try await clock.measure {
                try await store.apply(updates: inserted.map { job in
                    var finished = job
                    finished.state = .finished
                    return finished
                }, deletions: [])
            }
            print("PostgresJobStore: one batch of \(count) inserts in \(insertTime); \(count) single updates in \(updateTime); one group commit of \(count) updates in \(groupTime)")
            #expect(try await store.counts()[.finished] == count)
            await store.close()
        }
    }

    @Test func missingServerProgramsSayWhatToInstall() {
        #expect {
            _ = try PostgresServer.binaryDirectory(environment: ["PATH": "/nonexistent"], candidates: ["/nonexistent/bin"])
        } throws: { error in
            let message = "\(error)"
            return message.contains("apt-get install postgresql") && message.contains("FERRY_SKIP_POSTGRES=1")
                && message.contains("/nonexistent/bin")
        }
        #expect(throws: (any Error).self) {
            try PostgresServer.binaryDirectory(environment: ["FERRY_POSTGRES_BIN": "/nonexistent"])
        }
    }

    @Test func likePatternsAreLiteral() {
        #expect(PostgresJobQuery.escapedForLike(#"100%_done\x"#) == #"100\%\_done\\x"#)
        #expect(PostgresJobQuery.escapedForLike("plain ünï") == "plain ünï")
    }

    @Test func twoStoresOnOneDatabaseMigrateOnceAndShareTheSequence() async throws {
        try await withDatabase { _, _, location in
            // Opened at the same moment on a fresh database: the advisory lock lets one migrate, the other wait.
            async let first = Task.detached { try await PostgresJobStore(location: location) }.value
            async let second = Task.detached { try await PostgresJobStore(location: location) }.value
            let stores = try await [first, second]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        for batch in 0..<10 {
                            _ = try await store.insert([.make("s\(index)-\(batch)-a"), .make("s\(index)-\(batch)-b")])
                        }
                    }
                }
                try await group.waitForAll()
            }
            // Each sees the other's jobs; no sequence is given twice; a batch keeps its order (two stores' batches
            // may interleave: both draw from one SEQUENCE).
            let all = try await stores[0].all()
            #expect(all.count == 40)
            #expect(Set(all.map(\.sequence)).count == 40)
            #expect(try await stores[1].all() == all)
            let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0.sequence) })
            for index in 0..<2 {
                for batch in 0..<10 {
                    #expect(try #require(byID["s\(index)-\(batch)-b"]) > #require(byID["s\(index)-\(batch)-a"]))
                }
            }
            for store in stores { await store.close() }
        }
    }

    @Test func aSchemaFromANewerFerryIsRefused() async throws {
        try await withDatabase { server, name, location in
            let store = try await PostgresJobStore(location: location)
            await store.close()
            try await server.administer("INSERT INTO schema_migrations (version) VALUES (\(PostgresSchema.currentVersion + 1))", database: name)
            await #expect {
                _ = try await PostgresJobStore(location: location)
            } throws: { error in
                guard case JobStoreError.corrupt(let detail) = error else { return false }
                return detail.contains("schema version \(PostgresSchema.currentVersion + 1)") && detail.contains("/\(name)")
            }
        }
    }

    @Test func aConnectionTheServerClosedIsReplacedBeforeTheNextCall() async throws {
        try await withDatabase { server, name, location in
            let store = try await PostgresJobStore(location: location)
            _ = try await store.insert([.make("a")])
            try await server.administer(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)' AND pid <> pg_backend_pid()")
            // The first call may find the broken connection mid-statement (08006) or notice it first; either way the
            // store reconnects and later calls succeed.
            do {
                _ = try await store.job(id: "a")
            } catch let error as JobStoreError {
                #expect(error.isUnavailable, "\(error)")
            }
            #expect(try await store.job(id: "a")?.id == "a")
            _ = try await store.insert([.make("b")])
            #expect(try await store.all().map(\.id) == ["a", "b"])
            await store.close()
        }
    }

    @Test func errorsCarryTheirSQLSTATE() async throws {
        try await withDatabase { _, _, location in
            let store = try await PostgresJobStore(location: location)
            try await store.apply(updates: [], deletions: [], notices: [WebhookOutboxContractTests.notice("n1", due: 1_795_000_000)])
            do {
                try await store.apply(updates: [], deletions: [], notices: [WebhookOutboxContractTests.notice("n1", due: 1_795_000_000)])
                Issue.record("a duplicate notice was stored")
            } catch let JobStoreError.postgres(sqlstate, message, operation) {
                #expect(sqlstate == "23505")  // unique_violation
                #expect(message.contains("webhook_notices"))
                #expect(operation == "insert webhook notice")
            }
            await store.close()
            // A closed store says so.
            await #expect(throws: JobStoreError.postgres(sqlstate: "08003", message: "the job store is closed", operation: "read job")) {
                _ = try await store.job(id: "x")
            }
        }
    }

    @Test func unreachableServersAreUnavailableAndNamedWithoutThePassword() async throws {
        // Port 1: nothing listens there.
        let location = try #require(PostgresLocation("postgres://ferry:hunter2@127.0.0.1:1/jobs?connect_timeout=2"))
        do {
            _ = try await PostgresJobStore(location: location)
            Issue.record("connected to a port nothing listens on")
        } catch let error as JobStoreError {
            #expect(error.isUnavailable)
            #expect(!error.description.contains("hunter2"))
            #expect(error.description.contains("postgres://***@127.0.0.1:1/jobs"))
        }
    }

    @Test func oddTextSurvivesTheRoundTrip() async throws {
        try await withDatabase { _, _, location in
            let store = try await PostgresJobStore(location: location)
            let tags = ["a,b", "{braces}", "quo\"te", "back\\slash", "NULL", " spaced ", "'single'"]
            var job = JobRecord.make("odd", tags: tags, url: "https://origin.example/it's%20$1?x='; DROP TABLE jobs; --",
                                     filename: "quo\"te's \\ {file}.bin")
            job.headers = [HeaderField(name: "X-Quote", value: "\"'\\$1")]
            let stored = try await store.insert([job])
            #expect(try await store.job(id: "odd") == stored[0])
            #expect(try await store.job(id: "odd")?.tags == tags)
            for tag in tags {
                #expect(try await store.list(JobFilter(tag: tag), after: nil, limit: 10).jobs.map(\.id) == ["odd"], "\(tag)")
            }
            #expect(try await store.list(JobFilter(text: "DROP TABLE"), after: nil, limit: 10).jobs.map(\.id) == ["odd"])
            #expect(try await store.list(JobFilter(text: "{FILE}"), after: nil, limit: 10).jobs.map(\.id) == ["odd"])
            let record = IdempotencyRecord(key: "k", requestHash: "h", status: 201, body: [0, 1, 0xff, 0x5c, 0x78],
                                           createdAt: Date(timeIntervalSince1970: 1_795_000_000.000_6))
            try await store.saveIdempotencyRecord(record)
            #expect(try await store.idempotencyRecord(key: "k") == record.storedForm)
            await store.close()
        }
    }

    /// Several updates go in one statement (columns as arrays): odd text, NULLs, tags and dates come back as sent.
    @Test func oneStatementUpdatesSeveralJobsWithOddTextAndNulls() async throws {
        try await withDatabase { _, _, location in
            let store = try await PostgresJobStore(location: location)
            let stored = try await store.insert([JobRecord.make("one", tags: ["x"]), .make("two"), .make("three")])
            var one = stored[0]
            one.tags = ["a,b", "{braces}", "quo\"te", "back\\slash", "NULL", ""]
            one.filename = "NULL"
            one.bytesReceived = 1 << 40
            one.finishedAt = Date(timeIntervalSince1970: 1_795_000_000.123)
            one.headers = [HeaderField(name: "X-Quote", value: "\"'\\$1 {a,b}")]
            var two = stored[1]
            two.tags = []
            two.filename = nil
            two.bytesExpected = nil
            two.error = JobFailure(code: .httpError, message: "it said \"no\", twice", httpStatus: 503)
            two.state = .failed
            try await store.apply(updates: [one, two], deletions: [], notices: [])
            #expect(try await store.job(id: "one") == one.storedForm)
            #expect(try await store.job(id: "two") == two.storedForm)
            #expect(try await store.job(id: "three") == stored[2])
            #expect(try await store.list(JobFilter(tag: "NULL"), after: nil, limit: 10).jobs.map(\.id) == ["one"])
            #expect(try await store.list(JobFilter(tag: "x"), after: nil, limit: 10).jobs.isEmpty)
            await store.close()
        }
    }
}
