import CSQLite
import FerryCore
import Foundation
import Testing
@testable import FerryStore

/// What only the SQLite store promises: durability across reopen, WAL, clear errors for bad files, bulk speed.
@Suite("SQLiteJobStore")
struct SQLiteJobStoreTests {
    @Test func dataSurvivesCloseAndReopen() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-reopen")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"

        let store = try await SQLiteJobStore(path: path)
        let inserted = try await store.insert([.makeFull("a"), .make("b"), .make("c")])
        var updated = inserted[1]
        updated.state = .paused
        updated.bytesReceived = 12_345
        try await store.update(updated)
        #expect(try await store.delete(id: "c"))
        let record = IdempotencyRecord(key: "k", requestHash: "h", status: 201, body: [7, 8],
                                       createdAt: Date(timeIntervalSince1970: 1_795_000_000.5004))
        try await store.saveIdempotencyRecord(record)
        try await store.setValue("1234", forKey: "lastEventID")
        let revocation = RevokedSession(nonce: "ab", expiresAt: Date(timeIntervalSince1970: 1_795_000_600.0004))
        try await store.saveRevokedSession(revocation)
        await store.close()

        let reopened = try await SQLiteJobStore(path: path)
        #expect(try await reopened.all() == [inserted[0], updated.storedForm])
        #expect(try await reopened.idempotencyRecord(key: "k") == record.storedForm)
        #expect(try await reopened.value(forKey: "lastEventID") == "1234")
        #expect(try await reopened.revokedSessions(expiringAfter: .distantPast) == [revocation.storedForm])
        // The sequence counter survives too: the deleted job's sequence (3) is not handed out again.
        #expect(try await reopened.insert([.make("d")])[0].sequence == 4)
        await reopened.close()
    }

    @Test func opensInWALModeWithFullSync() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-wal")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        let store = try await SQLiteJobStore(path: path)
        #expect(try await store.pragma("journal_mode") == "wal")
        #expect(try await store.pragma("synchronous") == "2")  // FULL
        #expect(try await store.pragma("busy_timeout") == "\(SQLiteJobStore.busyTimeoutMilliseconds)")
        #expect(try await store.pragma("user_version") == "\(SQLiteSchema.currentVersion)")
        _ = try await store.insert([.make("a")])
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        await store.close()
    }

    @Test func aDatabaseOfSchemaOneIsMigratedKeepingItsJobs() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-migrate")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        // What a Ferry from before revoked sessions left behind: schema 1 and one of its rows.
        try makeDatabase(path, schema: 1)
        try rawExecute(path, Self.schemaOneRow(id: "a", url: "https://origin.example/a.bin", filename: nil))

        let migrated = try await SQLiteJobStore(path: path)
        #expect(try await migrated.pragma("user_version") == "\(SQLiteSchema.currentVersion)")
        let job = try #require(try await migrated.job(id: "a"))
        #expect(job.url == "https://origin.example/a.bin" && job.sequence == 1 && job.tags == [])
        try await migrated.saveRevokedSession(RevokedSession(nonce: "ab", expiresAt: .distantFuture))
        #expect(try await migrated.revokedSessions(expiringAfter: .distantPast).map(\.nonce) == ["ab"])
        await migrated.close()
    }

    @Test func schemaThreeIndexesJobsStoredBeforeIt() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-migrate3")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        try makeDatabase(path, schema: 2)
        try rawExecute(path, Self.schemaOneRow(id: "a", url: "ftp://bob:Pa55@files.example/Data.TAR", filename: "Données.tar"))
        try rawExecute(path, Self.schemaOneRow(id: "b", url: "https://origin.example/b.bin", filename: nil, sequence: 2))

        let migrated = try await SQLiteJobStore(path: path)
        func ids(_ filter: JobFilter) async throws -> [String] {
            try await migrated.list(filter, after: nil, limit: 10).jobs.map(\.id)
        }
        // The search text of rows written before schema 3 was filled in by the migration.
        #expect(try await ids(JobFilter(text: "DONNÉES")) == ["a"])
        #expect(try await ids(JobFilter(text: "data.tar")) == ["a"])
        #expect(try await ids(JobFilter(text: "pa55")).isEmpty)
        #expect(try await ids(JobFilter(text: "B.BIN")) == ["b"])
        #expect(try await ids(JobFilter(tag: "x")).isEmpty)
        var b = try #require(try await migrated.job(id: "b"))
        b.tags = ["x"]
        try await migrated.update(b)
        #expect(try await ids(JobFilter(tag: "x")) == ["b"])
        await migrated.close()
    }

    @Test func schemaSevenMovesAnExpectedSHA256IntoTheChecksum() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-migrate7")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        try makeDatabase(path, schema: 6)
        let digest = String(repeating: "AB", count: 32)
        try rawExecute(path, Self.schemaOneRow(id: "a", url: "https://origin.example/a.bin", filename: nil)
            + "UPDATE jobs SET expected_sha256 = '\(digest)' WHERE id = 'a';")
        try rawExecute(path, Self.schemaOneRow(id: "b", url: "https://origin.example/b.bin", filename: nil, sequence: 2))

        let migrated = try await SQLiteJobStore(path: path)
        #expect(try await migrated.job(id: "a")?.checksum == (try Checksum(algorithm: .sha256, value: digest.lowercased())))
        #expect(try await migrated.job(id: "b")?.checksum == nil)
        var b = try #require(try await migrated.job(id: "b"))
        b.checksum = try Checksum(algorithm: .md5, value: String(repeating: "0f", count: 16))
        try await migrated.update(b)
        #expect(try await migrated.job(id: "b")?.checksum?.description == "md5:" + String(repeating: "0f", count: 16))
        await migrated.close()
        // The old column is emptied, so the checksum has one home.
        try rawExecute(path, "UPDATE jobs SET state = 'paused' WHERE expected_sha256 IS NOT NULL")
        let reopened = try await SQLiteJobStore(path: path)
        #expect((try await reopened.counts()[.paused] ?? 0) == 0)
        #expect(try await reopened.counts()[.waiting] == 2)
        await reopened.close()
    }

    @Test func anUnreadableChecksumIsReportedAsCorrupt() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-badsum")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        await (try await SQLiteJobStore(path: path)).close()
        try rawExecute(path, Self.schemaOneRow(id: "a", url: "https://origin.example/a.bin", filename: nil)
            + "UPDATE jobs SET checksum = 'sha-3:00' WHERE id = 'a';")
        let store = try await SQLiteJobStore(path: path)
        do {
            _ = try await store.job(id: "a")
            Issue.record("a checksum Ferry never writes was read")
        } catch let JobStoreError.corrupt(detail) {
            #expect(detail.contains("job a") && detail.contains("checksum"), "\(detail)")
        }
        await store.close()
    }

    @Test func aTagIsReadFromItsIndexInListOrder() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-plan")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        let store = try await SQLiteJobStore(path: path)
        _ = try await store.insert([.make("a", tags: ["t"])])
        await store.close()
        let plan = try queryPlan(path, SQLiteJobQuery(JobFilter(states: [.waiting], tag: "t", text: "a")).sql)
        // Walks job_tags' primary key from the tag and the cursor, with no sort step, and finds each row by key.
        #expect(plan.contains { $0.contains("job_tags USING PRIMARY KEY (tag=? AND sequence>?)") }, "\(plan)")
        #expect(plan.contains { $0.contains("jobs USING INDEX sqlite_autoindex_jobs") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    @Test func aFileThatIsNotADatabaseIsReportedAsSuch() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-notadb")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        try Data(String(repeating: "this is not a database\n", count: 200).utf8).write(to: URL(fileURLWithPath: path))
        do {
            _ = try await SQLiteJobStore(path: path)
            Issue.record("opening a text file as a job store succeeded")
        } catch let JobStoreError.corrupt(detail) {
            #expect(detail.contains(path))
            #expect(detail.contains("not a SQLite database"))
        }
    }

    @Test func aDatabaseFromANewerFerryIsRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-newer")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        await (try await SQLiteJobStore(path: path)).close()
        try rawExecute(path, "PRAGMA user_version = 99")
        do {
            _ = try await SQLiteJobStore(path: path)
            Issue.record("a schema from the future was accepted")
        } catch let JobStoreError.corrupt(detail) {
            #expect(detail.contains("schema version 99"))
        }
    }

    @Test func anUnopenablePathCarriesTheSQLiteCodeAndOperation() async throws {
        let path = "/nonexistent-\(UUID().uuidString)/jobs.sqlite"
        do {
            _ = try await SQLiteJobStore(path: path)
            Issue.record("opened a database in a directory that does not exist")
        } catch let JobStoreError.sqlite(code, _, operation) {
            #expect(code & 0xff == SQLITE_CANTOPEN)
            #expect(operation.contains(path))
        }
    }

    @Test func callsAfterCloseFailWithMisuse() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-closed")
        defer { directory.remove() }
        let store = try await SQLiteJobStore(path: directory.path + "/jobs.sqlite")
        _ = try await store.insert([.make("a")])
        await store.close()
        await store.close()  // twice is harmless
        do {
            _ = try await store.job(id: "a")
            Issue.record("a closed store answered")
        } catch let JobStoreError.sqlite(code, message, _) {
            #expect(code == SQLITE_MISUSE)
            #expect(message.contains("closed"))
        }
    }

    @Test func aRowFerryNeverWroteIsReportedAsCorrupt() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-badrow")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        let store = try await SQLiteJobStore(path: path)
        _ = try await store.insert([.make("a")])
        try rawExecute(path, "UPDATE jobs SET state = 'exploded' WHERE id = 'a'")
        await #expect(throws: JobStoreError.corrupt("job a: unknown state \"exploded\"")) {
            try await store.job(id: "a")
        }
        await #expect(throws: JobStoreError.self) { try await store.counts() }
        await store.close()
    }

    @Test func twoThousandJobsInsertAndUpdate() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-bulk")
        defer { directory.remove() }
        let store = try await SQLiteJobStore(path: directory.path + "/jobs.sqlite")
        let count = 2000
        let jobs = (0..<count).map { JobRecord.make("job-\($0)") }

        let clock = ContinuousClock()
        var inserted: [JobRecord] = []
        let insertTime = try await clock.measure { inserted = try await store.insert(jobs) }
        #expect(inserted.count == count)

        let updateTime = try await clock.measure {
            for var job in inserted {
                job.state = .downloading
                job.bytesReceived = 1000
                try await store.update(job)
            }
        }
        print("SQLiteJobStore: one batch of \(count) inserts in \(insertTime); \(count) single updates in \(updateTime)")
        #expect(try await store.counts()[.downloading] == count)
        #expect(try await store.all().allSatisfy { $0.bytesReceived == 1000 })
        await store.close()
    }

    /// Creates a database at `path` as a Ferry of that schema version made it.
    private func makeDatabase(_ path: String, schema version: Int32) throws {
        let queue = DispatchQueue(label: "test.schema")
        try queue.sync {
            let connection = try SQLiteConnection(path: path, queue: queue)
            try SQLiteSchema.migrate(connection, upTo: version)
            connection.close()
        }
    }

    /// An `INSERT` of a waiting job with only schema 1's columns.
    private static func schemaOneRow(id: String, url: String, filename: String?, sequence: Int = 1) -> String {
        """
        INSERT INTO jobs (id, sequence, state, dedupe_key, url, filename, bytes_received, attempts, priority, headers,
                          created_at, updated_at)
        VALUES ('\(id)', \(sequence), 'waiting', '\(url)', '\(url)', \(filename.map { "'\($0)'" } ?? "NULL"), 0, 0, 0, '[]',
                1795000000.123, 1795000000.123);
        UPDATE counters SET value = \(sequence) WHERE name = 'job_sequence';
        """
    }

    /// The lines of `EXPLAIN QUERY PLAN` for `sql`.
    private func queryPlan(_ path: String, _ sql: String) throws -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw JobStoreError.corrupt("raw open failed") }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN " + sql, -1, &statement, nil) == SQLITE_OK else {
            throw JobStoreError.corrupt(String(cString: sqlite3_errmsg(db)))
        }
        defer { sqlite3_finalize(statement) }
        var lines: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { lines.append(String(cString: sqlite3_column_text(statement, 3))) }
        return lines
    }

    /// Runs SQL on the file through a separate raw connection (what a damaged or foreign database looks like).
    private func rawExecute(_ path: String, _ sql: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw JobStoreError.corrupt("raw open failed") }
        defer { sqlite3_close(db) }
        sqlite3_busy_timeout(db, 5000)
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else {
            throw JobStoreError.sqlite(code: rc, message: String(cString: sqlite3_errmsg(db)), operation: sql)
        }
    }
}
