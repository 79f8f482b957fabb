import FerryCore
import Foundation
import FerryCore
import Testing
@testable import FerryStore

/// The behaviour every `JobStore` promises, run against each implementation.
@Suite("JobStore contract")
struct JobStoreContractTests {
    // MARK: Insert, read, update, delete

    @Test(arguments: StoreKind.allCases)
    func insertAssignsSequenceAndReadsBackEqual(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let full = JobRecord.makeFull("full")
            let stored = try await store.insert([full, .make("plain")])
            #expect(stored.count == 2)
            #expect(stored[0].sequence == 1)
            #expect(stored[1].sequence == 2)

            var expected = full.storedForm
            expected.sequence = 1
            #expect(stored[0] == expected)
            #expect(stored[0] != full)  // the original's dates are off the millisecond grid
            #expect(StoredDate.milliseconds(stored[0].createdAt) == 1_795_000_000_123)
            #expect(StoredDate.milliseconds(stored[0].finishedAt!) == 1_795_000_003_000)

            #expect(try await store.job(id: "full") == stored[0])
            #expect(try await store.job(id: "plain") == stored[1])
            #expect(try await store.job(id: "missing") == nil)
        }
    }

    /// A checksum of each algorithm is kept as given (value lowercased when it was made), through insert and update.
    @Test(arguments: StoreKind.allCases)
    func checksumsOfEveryAlgorithmAreKept(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var jobs: [JobRecord] = []
            for (index, algorithm) in DigestAlgorithm.allCases.enumerated() {
                var job = JobRecord.make("c\(index)")
                job.checksum = try Checksum(algorithm: algorithm, value: String(repeating: "aF", count: algorithm.hexLength / 2))
                jobs.append(job)
            }
            _ = try await store.insert(jobs + [.make("none")])
            for job in jobs {
                let read = try #require(try await store.job(id: job.id))
                #expect(read.checksum == job.checksum)
                #expect(read.checksum?.value == String(repeating: "af", count: job.checksum!.algorithm.hexLength / 2))
            }
            #expect(try await store.job(id: "none")?.checksum == nil)
            var changed = try #require(try await store.job(id: "c0"))
            changed.checksum = try Checksum(algorithm: .md5, value: String(repeating: "01", count: 16))
            try await store.update(changed)
            #expect(try await store.job(id: "c0")?.checksum == changed.checksum)
            changed.checksum = nil
            try await store.update(changed)
            #expect(try await store.job(id: "c0")?.checksum == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func updateReplacesTheWholeRecordButKeepsTheSequence(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let stored = try await store.insert([.makeFull("a"), .make("b")])
            var changed = JobRecord.make("a", state: .downloading)
            changed.sequence = 99  // ignored: a job keeps the sequence it was given
            changed.bytesReceived = 77
            changed.headers = [HeaderField(name: "Cookie", value: "k=v")]
            changed.lastModified = ""
            changed.updatedAt = Date(timeIntervalSince1970: 1_795_000_100.000_6)
            try await store.update(changed)

            var expected = changed.storedForm
            expected.sequence = stored[0].sequence
            let read = try #require(try await store.job(id: "a"))
            #expect(read == expected)
            #expect(read.finalURL == nil && read.error == nil && read.etag == nil)  // optionals cleared
            #expect(read.lastModified == "")  // an empty text is not NULL
            #expect(try await store.job(id: "b") == stored[1])  // neighbours untouched
        }
    }

    @Test(arguments: StoreKind.allCases)
    func applyUpdatesAndDeletesTogetherAndSkipsVanishedJobs(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let stored = try await store.insert([.make("a"), .make("b"), .make("c")])
            var a = JobRecord.make("a", state: .finished)
            a.bytesReceived = 42
            try await store.apply(updates: [a, .make("ghost", state: .failed)], deletions: ["b"])
            let readA = try #require(try await store.job(id: "a"))
            #expect(readA.state == .finished && readA.bytesReceived == 42 && readA.sequence == stored[0].sequence)
            #expect(try await store.job(id: "b") == nil)
            #expect(try await store.job(id: "ghost") == nil)  // an update never creates a job
            #expect(try await store.job(id: "c") == stored[2])
            try await store.apply(updates: [], deletions: [])
            #expect(try await store.all().map(\.id) == ["a", "c"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func updatingAMissingJobThrowsNotFound(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("present")])
            await #expect(throws: JobStoreError.notFound("ghost")) {
                try await store.update(.make("ghost"))
            }
            #expect(try await store.job(id: "ghost") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRemovesOnlyThatJob(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a"), .make("b"), .make("c")])
            #expect(try await store.delete(id: "b"))
            #expect(try await !store.delete(id: "b"))
            #expect(try await !store.delete(id: "never"))
            #expect(try await store.job(id: "b") == nil)
            #expect(try await store.all().map(\.id) == ["a", "c"])
            // The id is free again.
            let again = try await store.insert([.make("b")])
            #expect(again[0].sequence == 4)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func sequencesGrowAcrossBatchesAndAreNeverReused(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = try await store.insert((1...3).map { JobRecord.make("a\($0)") })
            let second = try await store.insert([.make("b1"), .make("b2")])
            #expect(first.map(\.sequence) == [1, 2, 3])
            #expect(second.map(\.sequence) == [4, 5])
            #expect(try await store.delete(id: "b2"))
            let third = try await store.insert([.make("c1")])
            #expect(third[0].sequence == 6)  // not 5, though 5 was deleted
            #expect(try await store.insert([]) == [])
            #expect(try await store.all().map(\.sequence) == [1, 2, 3, 4, 6])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aDuplicateIDRejectsTheWholeBatch(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a")])
            await #expect(throws: JobStoreError.duplicateID("a")) {
                try await store.insert([.make("b"), .make("a")])
            }
            await #expect(throws: JobStoreError.duplicateID("c")) {
                try await store.insert([.make("c"), .make("c")])
            }
            #expect(try await store.all().map(\.id) == ["a"])
            let next = try await store.insert([.make("d")])
            #expect(next[0].sequence > 1)
        }
    }

    // MARK: Listing

    @Test(arguments: StoreKind.allCases)
    func listFiltersByStates(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let states: [JobState] = [.waiting, .downloading, .paused, .finished, .failed, .cancelled, .waiting, .paused]
            _ = try await store.insert(states.enumerated().map { JobRecord.make("j\($0.offset)", state: $0.element) })

            let some = try await store.list(states: [.waiting, .paused], after: nil, limit: 100)
            #expect(some.jobs.map(\.id) == ["j0", "j2", "j6", "j7"])
            #expect(some.next == nil)

            let one = try await store.list(states: [.cancelled], after: nil, limit: 100)
            #expect(one.jobs.map(\.id) == ["j5"])

            let none = try await store.list(states: [], after: nil, limit: 100)
            #expect(none.jobs.isEmpty && none.next == nil)

            let all = try await store.list(states: nil, after: nil, limit: 100)
            #expect(all.jobs.map(\.id) == (0..<8).map { "j\($0)" })
            #expect(try await store.list(states: Set(JobState.allCases), after: nil, limit: 100).jobs == all.jobs)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func cursorsWalkEveryJobOnceInOrder(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let cycle: [JobState] = [.waiting, .finished, .failed]
            let inserted = try await store.insert((0..<25).map { JobRecord.make("j\($0)", state: cycle[$0 % 3]) })
            _ = try await store.insert((25..<30).map { JobRecord.make("j\($0)", state: .paused) })

            // Everything, 7 per page: 7, 7, 7, 7, 2.
            let everything = try await walk(store, states: nil, limit: 7)
            #expect(everything.sizes == [7, 7, 7, 7, 2])
            #expect(everything.ids == (0..<30).map { "j\($0)" })
            #expect(Array(everything.jobs.prefix(25)) == inserted)

            // Filtered: the finished ones (j1, j4, ..., j22: 8 jobs), 3 per page.
            let finished = try await walk(store, states: [.finished], limit: 3)
            #expect(finished.sizes == [3, 3, 2])
            #expect(finished.ids == stride(from: 1, to: 25, by: 3).map { "j\($0)" })

            // A page that ends exactly on the last match has no next cursor.
            let exact = try await walk(store, states: [.paused], limit: 5)
            #expect(exact.sizes == [5])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aCursorSurvivesTheDeletionOfTheJobItPointsAt(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert((0..<6).map { JobRecord.make("j\($0)") })
            let first = try await store.list(states: nil, after: nil, limit: 3)
            #expect(first.jobs.map(\.id) == ["j0", "j1", "j2"])
            #expect(try await store.delete(id: "j2"))
            #expect(try await store.delete(id: "j3"))
            let second = try await store.list(states: nil, after: first.next, limit: 3)
            #expect(second.jobs.map(\.id) == ["j4", "j5"])
            #expect(second.next == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func limitIsClampedToOneThroughAThousand(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert((0..<1003).map { JobRecord.make("j\($0)") })
            let big = try await store.list(states: nil, after: nil, limit: 5000)
            #expect(big.jobs.count == 1000)
            #expect(big.next != nil)
            let rest = try await store.list(states: nil, after: big.next, limit: 5000)
            #expect(rest.jobs.map(\.id) == ["j1000", "j1001", "j1002"])
            #expect(try await store.list(states: nil, after: nil, limit: 0).jobs.map(\.id) == ["j0"])
            #expect(try await store.list(states: nil, after: nil, limit: -5).jobs.map(\.id) == ["j0"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anInvalidCursorThrows(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a")])
            let foreign = Data("page=2".utf8).base64EncodedString()
            for cursor in ["", "not a cursor!", "czox=", "czowMTA", foreign, "czotMQ", "czoxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1"] {
                await #expect(throws: JobStoreError.invalidCursor(cursor), "cursor \(cursor)") {
                    try await store.list(states: nil, after: cursor, limit: 10)
                }
            }
        }
    }

    // MARK: Tags and search

    @Test(arguments: StoreKind.allCases)
    func tagsReadBackAsGivenAndFilterExactly(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([
                .make("a", tags: ["video", "Big", "video"]),
                .make("b", state: .finished, tags: ["big"]),
                .make("c"),
                .make("d", tags: ["ünï ✓", "video"]),
                .make("e", state: .paused, tags: ["video"]),
            ])
            // As given: order and repeats kept; none is [].
            #expect(try await store.job(id: "a")?.tags == ["video", "Big", "video"])
            #expect(try await store.job(id: "c")?.tags == [])

            func ids(_ filter: JobFilter) async throws -> [String] {
                try await store.list(filter, after: nil, limit: 100).jobs.map(\.id)
            }
            #expect(try await ids(JobFilter(tag: "video")) == ["a", "d", "e"])  // a job with a tag twice, once
            #expect(try await ids(JobFilter(tag: "Big")) == ["a"])  // exact: case counts
            #expect(try await ids(JobFilter(tag: "big")) == ["b"])
            #expect(try await ids(JobFilter(tag: "ünï ✓")) == ["d"])
            #expect(try await ids(JobFilter(tag: "vid")).isEmpty)  // no prefix match
            #expect(try await ids(JobFilter(tag: "")).isEmpty)
            #expect(try await ids(JobFilter(states: [.waiting], tag: "video")) == ["a", "d"])
            #expect(try await ids(JobFilter(states: [], tag: "video")).isEmpty)
            #expect(try await ids(JobFilter()) == ["a", "b", "c", "d", "e"])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func textMatchesFilenameOrTheURLAsShownInAnyCase(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([
                .make("plain", url: "https://Files.example/Report-2026.PDF"),
                .make("named", url: "https://origin.example/download?id=7", filename: "Résumé Final.docx"),
                .make("secret", url: "sftp://alice:hunter2@vault.example/backup.tar", filename: "backup.tar"),
                .make("odd", url: "https://origin.example/100%25_done.bin", filename: "100%_done.bin"),
            ])
            func ids(_ text: String, states: Set<JobState>? = nil) async throws -> [String] {
                try await store.list(JobFilter(states: states, text: text), after: nil, limit: 100).jobs.map(\.id)
            }
            #expect(try await ids("report-2026.pdf") == ["plain"])  // URL, any case
            #expect(try await ids("RÉSUMÉ") == ["named"])  // filename, any case beyond ASCII
            #expect(try await ids("download?id=7") == ["named"])
            #expect(try await ids("origin.example") == ["named", "odd"])
            // The password is not searchable; what users see (`***@`) is.
            #expect(try await ids("hunter2").isEmpty)
            #expect(try await ids("alice").isEmpty)
            #expect(try await ids("***@vault") == ["secret"])
            // Literal text: no wildcards.
            #expect(try await ids("%_") == ["odd"])
            #expect(try await ids("100%25") == ["odd"])
            #expect(try await ids("_").count == 1)
            #expect(try await ids("tar").count == 1)
            #expect(try await ids("tar", states: [.finished]).isEmpty)
            #expect(try await ids("").count == 4)  // an empty text matches every job
        }
    }

    @Test(arguments: StoreKind.allCases)
    func filteredCursorsWalkEveryMatchOnce(kind: StoreKind) async throws {
        try await kind.withStore { store in
            // 40 jobs: every third tagged "even"/"odd" by index parity, every fourth named "match-i.iso".
            let cycle: [JobState] = [.waiting, .finished, .paused]
            func tags(_ i: Int) -> [String] { i % 3 == 0 ? [i % 2 == 0 ? "even" : "odd", "all"] : ["all"] }
            _ = try await store.insert((0..<40).map { i in
                JobRecord.make("j\(i)", state: cycle[i % 3], tags: tags(i),
                               filename: i % 4 == 0 ? "Match-\(i).iso" : "other-\(i).bin")
            })
            // Noise after the matches, so the last page of each walk is followed by non-matching jobs.
            _ = try await store.insert((40..<45).map { JobRecord.make("j\($0)") })

            let even = try await walk(store, JobFilter(tag: "even"), limit: 3)
            let expectedEven = (0..<40).filter { $0 % 3 == 0 && $0 % 2 == 0 }.map { "j\($0)" }  // 0, 6, ..., 36: 7
            #expect(even.ids == expectedEven)
            #expect(even.sizes == [3, 3, 1])

            let text = try await walk(store, JobFilter(text: "MATCH-"), limit: 4)
            #expect(text.ids == (0..<40).filter { $0 % 4 == 0 }.map { "j\($0)" })  // 10 of them
            #expect(text.sizes == [4, 4, 2])

            let all = try await walk(store, JobFilter(states: [.waiting, .paused], tag: "all", text: "match"), limit: 2)
            let expectedAll = (0..<40).filter { $0 % 4 == 0 && $0 % 3 != 1 }.map { "j\($0)" }
            #expect(all.ids == expectedAll)
            #expect(all.sizes == [2, 2, 2, 1])

            // A page that ends exactly on the last match has no next cursor.
            let exact = try await walk(store, JobFilter(tag: "odd"), limit: 6)  // 3, 9, ..., 39: 7
            #expect(exact.sizes == [6, 1])
            let seven = try await store.list(JobFilter(tag: "odd"), after: nil, limit: 7)
            #expect(seven.jobs.count == 7 && seven.next == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func filtersFollowUpdatesAndDeletes(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let stored = try await store.insert([.make("a", tags: ["old"]), .make("b", tags: ["old"]), .make("c")])
            func ids(_ filter: JobFilter) async throws -> [String] {
                try await store.list(filter, after: nil, limit: 100).jobs.map(\.id)
            }
            // Tags replaced by an update; a filename learnt later is searchable.
            var a = stored[0]
            a.tags = ["new", "other"]
            a.filename = "Learnt Later.iso"
            try await store.update(a)
            #expect(try await ids(JobFilter(tag: "old")) == ["b"])
            #expect(try await ids(JobFilter(tag: "new")) == ["a"])
            #expect(try await ids(JobFilter(text: "learnt")) == ["a"])

            // An update that leaves the tags alone keeps them indexed; a group commit changes and deletes.
            a.bytesReceived = 10
            var c = stored[2]
            c.tags = ["old"]
            try await store.apply(updates: [a, c], deletions: ["b"])
            #expect(try await ids(JobFilter(tag: "new")) == ["a"])
            #expect(try await ids(JobFilter(tag: "old")) == ["c"])

            // Tags removed, a job deleted: gone from the index; the id comes back without its old tags.
            a.tags = []
            try await store.update(a)
            #expect(try await ids(JobFilter(tag: "new")).isEmpty)
            #expect(try await store.delete(id: "c"))
            #expect(try await ids(JobFilter(tag: "old")).isEmpty)
            _ = try await store.insert([.make("c", tags: ["fresh"])])
            #expect(try await ids(JobFilter(tag: "old")).isEmpty)
            #expect(try await ids(JobFilter(tag: "fresh")) == ["c"])
        }
    }

    // MARK: Lookups

    @Test(arguments: StoreKind.allCases)
    func dedupeKeyFindsEveryJobWithThatKey(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([
                .make("a", state: .finished, dedupeKey: "k"),
                .make("b", dedupeKey: "other"),
                .make("c", state: .cancelled, dedupeKey: "k"),
                .make("d", dedupeKey: "k"),
            ])
            #expect(try await store.jobs(dedupeKey: "k").map(\.id) == ["a", "c", "d"])
            #expect(try await store.jobs(dedupeKey: "other").map(\.id) == ["b"])
            #expect(try await store.jobs(dedupeKey: "K").isEmpty)  // keys are compared exactly
            #expect(try await store.jobs(dedupeKey: "none").isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func countsHaveEveryStateIncludingZeros(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var expected = Dictionary(uniqueKeysWithValues: JobState.allCases.map { ($0, 0) })
            #expect(try await store.counts() == expected)
            let states: [JobState] = [.waiting, .waiting, .waiting, .failed, .finished, .finished]
            _ = try await store.insert(states.enumerated().map { JobRecord.make("j\($0.offset)", state: $0.element) })
            var moved = try #require(try await store.job(id: "j0"))
            moved.state = .downloading
            try await store.update(moved)
            expected[.waiting] = 2
            expected[.downloading] = 1
            expected[.failed] = 1
            expected[.finished] = 2
            #expect(try await store.counts() == expected)
        }
    }

    // MARK: Idempotency records and metadata

    @Test(arguments: StoreKind.allCases)
    func idempotencyRecordsSaveLookUpReplaceAndPurge(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let now = Date(timeIntervalSince1970: 1_795_000_000.000_4)
            let old = IdempotencyRecord(key: "old", requestHash: "h1", status: 201, body: Array("{\"id\":1}".utf8),
                                        createdAt: now.addingTimeInterval(-90_000))
            let fresh = IdempotencyRecord(key: "fresh", requestHash: "h2", status: 200, body: [],
                                          createdAt: now.addingTimeInterval(-10))
            try await store.saveIdempotencyRecord(old)
            try await store.saveIdempotencyRecord(fresh)
            #expect(try await store.idempotencyRecord(key: "old") == old.storedForm)
            #expect(try await store.idempotencyRecord(key: "fresh") == fresh.storedForm)
            #expect(try await store.idempotencyRecord(key: "none") == nil)

            var replaced = fresh
            replaced.status = 409
            replaced.body = [1, 2, 3]
            try await store.saveIdempotencyRecord(replaced)
            #expect(try await store.idempotencyRecord(key: "fresh") == replaced.storedForm)

            try await store.purgeIdempotencyRecords(olderThan: now.addingTimeInterval(-86_400))
            #expect(try await store.idempotencyRecord(key: "old") == nil)
            #expect(try await store.idempotencyRecord(key: "fresh") == replaced.storedForm)

            // Strictly older: a record created exactly at the cut-off stays.
            try await store.purgeIdempotencyRecords(olderThan: replaced.storedForm.createdAt)
            #expect(try await store.idempotencyRecord(key: "fresh") != nil)
            try await store.purgeIdempotencyRecords(olderThan: now)
            #expect(try await store.idempotencyRecord(key: "fresh") == nil)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func jobsAndTheirIdempotencyRecordAreStoredTogetherOrNotAtAll(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let record = IdempotencyRecord(key: "k", requestHash: "h", status: 201, body: Array("{}".utf8),
                                           createdAt: Date(timeIntervalSince1970: 1_795_000_000.000_4))
            let stored = try await store.insert([JobRecord.make("a"), JobRecord.make("b")], idempotencyRecord: record)
            #expect(stored.map(\.id) == ["a", "b"])
            #expect(try await store.idempotencyRecord(key: "k") == record.storedForm)

            // A batch that fails (a duplicate id) stores neither its jobs nor its record.
            var other = record
            other.key = "k2"
            await #expect(throws: JobStoreError.self) {
                _ = try await store.insert([JobRecord.make("c"), JobRecord.make("a")], idempotencyRecord: other)
            }
            #expect(try await store.job(id: "c") == nil)
            #expect(try await store.idempotencyRecord(key: "k2") == nil)

            // No jobs to insert: the record alone is saved.
            other.key = "k3"
            #expect(try await store.insert([], idempotencyRecord: other).isEmpty)
            #expect(try await store.idempotencyRecord(key: "k3") == other.storedForm)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func metaValuesAreSetAndReplaced(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.value(forKey: "lastEventID") == nil)
            try await store.setValue("41", forKey: "lastEventID")
            try await store.setValue("ünïcode ✓", forKey: "other")
            try await store.setValue("42", forKey: "lastEventID")
            #expect(try await store.value(forKey: "lastEventID") == "42")
            #expect(try await store.value(forKey: "other") == "ünïcode ✓")
            try await store.setValue("", forKey: "other")
            #expect(try await store.value(forKey: "other") == "")
        }
    }

    // MARK: Revoked sessions

    @Test(arguments: StoreKind.allCases)
    func revokedSessionsAreSavedListedByExpiryAndPurged(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let now = Date(timeIntervalSince1970: 1_795_000_000.000_4)
            let later = RevokedSession(nonce: "bb", expiresAt: now.addingTimeInterval(600.000_7))
            let sooner = RevokedSession(nonce: "cc", expiresAt: now.addingTimeInterval(60))
            let tie = RevokedSession(nonce: "aa", expiresAt: now.addingTimeInterval(600.000_7))
            let expired = RevokedSession(nonce: "dd", expiresAt: now.addingTimeInterval(-1))
            #expect(try await store.revokedSessions(expiringAfter: now).isEmpty)
            for revocation in [later, sooner, tie, expired] { try await store.saveRevokedSession(revocation) }

            // Soonest expiry first, then by nonce; expired ones are not listed.
            #expect(try await store.revokedSessions(expiringAfter: now) == [sooner, tie, later].map(\.storedForm))
            #expect(try await store.revokedSessions(expiringAfter: .distantPast).count == 4)
            // Strictly after: a revocation expiring exactly then is not listed.
            #expect(try await store.revokedSessions(expiringAfter: sooner.storedForm.expiresAt) == [tie, later].map(\.storedForm))

            // Saving a nonce again replaces its record.
            try await store.saveRevokedSession(RevokedSession(nonce: "cc", expiresAt: now.addingTimeInterval(900)))
            #expect(try await store.revokedSessions(expiringAfter: now).map(\.nonce) == ["aa", "bb", "cc"])

            // Purging removes those expiring at or before the date; `.distantFuture` removes them all.
            try await store.purgeRevokedSessions(expiringBy: later.storedForm.expiresAt)
            #expect(try await store.revokedSessions(expiringAfter: .distantPast).map(\.nonce) == ["cc"])
            try await store.purgeRevokedSessions(expiringBy: .distantFuture)
            #expect(try await store.revokedSessions(expiringAfter: .distantPast).isEmpty)
        }
    }

    // MARK: Concurrency

    @Test(arguments: StoreKind.allCases)
    func concurrentInsertsAndUpdatesEndConsistent(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let writers = 40
            // Every writer inserts its own batch of two, concurrently.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        _ = try await store.insert([.make("w\(writer)-a"), .make("w\(writer)-b")])
                    }
                }
                try await group.waitForAll()
            }
            let all = try await store.all()
            #expect(all.count == writers * 2)
            #expect(all.map(\.sequence) == Array(1...Int64(writers * 2)))  // no gaps, no repeats, ordered
            // A batch's jobs get consecutive sequences (one transaction each).
            let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0.sequence) })
            for writer in 0..<writers { #expect(byID["w\(writer)-b"] == byID["w\(writer)-a"].map { $0 + 1 }) }

            // Every job is updated five times in order by its own task, all tasks at once.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for job in all {
                    group.addTask {
                        var copy = job
                        for attempt in 1...5 {
                            copy.attempts = attempt
                            copy.state = attempt == 5 ? .finished : .downloading
                            try await store.update(copy)
                        }
                    }
                }
                // Readers run alongside.
                for _ in 0..<10 {
                    group.addTask {
                        let page = try await store.list(states: nil, after: nil, limit: 1000)
                        #expect(page.jobs.count == writers * 2)
                    }
                }
                try await group.waitForAll()
            }
            let final = try await store.all()
            #expect(final.allSatisfy { $0.attempts == 5 && $0.state == .finished })
            #expect(final.map(\.sequence) == all.map(\.sequence))
            #expect(try await store.counts()[.finished] == writers * 2)
        }
    }

    // MARK: Helpers

    /// Follows `next` cursors until the last page.
    private func walk(_ store: any JobStore, states: Set<JobState>?, limit: Int) async throws
        -> (jobs: [JobRecord], ids: [String], sizes: [Int])
    {
        try await walk(store, JobFilter(states: states), limit: limit)
    }

    /// Follows `next` cursors of a filtered list until the last page.
    private func walk(_ store: any JobStore, _ filter: JobFilter, limit: Int) async throws
        -> (jobs: [JobRecord], ids: [String], sizes: [Int])
    {
        var jobs: [JobRecord] = []
        var sizes: [Int] = []
        var cursor: String?
        repeat {
            let page = try await store.list(filter, after: cursor, limit: limit)
            jobs += page.jobs
            sizes.append(page.jobs.count)
            cursor = page.next
            if sizes.count > 100 { Issue.record("pagination does not end"); break }
        } while cursor != nil
        return (jobs, jobs.map(\.id), sizes)
    }
}

/// Delivery state, kept whole by every store.
@Suite("JobStore contract: delivery")
struct DeliveryStoreContractTests {
    @Test(arguments: StoreKind.allCases)
    func aDeliveryReadsBackEqualAndChanges(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var job = JobRecord.make("d", state: .delivering)
            var delivery = Delivery(url: "https://user:pw@target.example/up?sig=1", method: .post, field: "upload",
                                    fields: [HeaderField(name: "a", value: "1 2"), HeaderField(name: "b", value: "é")],
                                    headers: [HeaderField(name: "Authorization", value: "Bearer x")], deleteAfter: true)
            delivery.state = .sending
            delivery.bytesSent = 10
            delivery.bytesTotal = 100
            delivery.attempts = 2
            job.delivery = delivery
            let stored = try await store.insert([job, .make("plain")])
            #expect(stored[0].delivery == delivery)
            #expect(try await store.job(id: "d") == stored[0])
            #expect(try await store.job(id: "plain")?.delivery == nil)

            var delivered = stored[0]
            delivered.state = .finished
            delivered.delivery?.state = .delivered
            delivered.delivery?.httpStatus = 201
            delivered.delivery?.deliveredAt = Date(timeIntervalSince1970: 1_795_000_000.1234)
            try await store.apply(updates: [delivered], deletions: [], notices: [])
            let read = try #require(try await store.job(id: "d"))
            #expect(read == delivered.storedForm)
            #expect(read.delivery.flatMap(\.deliveredAt).map(StoredDate.milliseconds) == 1_795_000_000_123)
        }
    }
}

/// A job's mirror sources, kept whole by every store (a dropped source stays dropped across restarts).
@Suite("JobStore contract: sources")
struct SourcesStoreContractTests {
    @Test(arguments: StoreKind.allCases)
    func sourcesReadBackEqualAndChange(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var job = JobRecord.make("m", state: .downloading)
            job.sources = [
                JobSource(url: "https://a.example/f.iso", bytesReceived: 1_048_576),
                JobSource(url: "https://user:pw@b.example/f.iso", bytesReceived: 7,
                          error: JobFailure(code: .sourceMismatch, message: "the mirror's ETag differs", httpStatus: nil)),
                JobSource(url: "https://c.example/f.iso", error: JobFailure(code: .httpError, message: "404", httpStatus: 404)),
            ]
            let stored = try await store.insert([job, .make("plain")])
            #expect(stored[0].sources == job.sources)
            #expect(try await store.job(id: "m") == stored[0])
            #expect(try await store.job(id: "plain")?.sources == nil)

            var changed = stored[0]
            changed.sources?[0].bytesReceived = 2_000_000
            changed.sources?[0].error = JobFailure(code: .networkError, message: "reset", httpStatus: nil)
            try await store.apply(updates: [changed], deletions: [], notices: [])
            #expect(try await store.job(id: "m") == changed.storedForm)
        }
    }
}

/// The job whose transfer a job follows (`JobRecord.follows`), kept by every store and cleared when it gets its own.
@Suite("JobStore contract: follows")
struct FollowsStoreContractTests {
    @Test(arguments: StoreKind.allCases)
    func followsReadsBackAndClears(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var job = JobRecord.make("f")
            job.follows = "leader"
            let stored = try await store.insert([job, .make("leader")])
            #expect(try await store.job(id: "f")?.follows == "leader")
            #expect(try await store.job(id: "leader")?.follows == nil)
            var own = stored[0]
            own.follows = nil
            try await store.apply(updates: [own], deletions: [], notices: [])
            #expect(try await store.job(id: "f") == own.storedForm)
        }
    }
}
