import Dispatch
import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// `ClusterJobStore` on a real PostgreSQL: each "node" is a `PostgresJobStore` of its own (its own connection) on one
/// database, as several Ferry processes would be. Leases are short (1 s) and the database's clock decides.
@Suite("PostgresJobStore, several nodes", .enabled(if: !PostgresServer.isSkipped))
struct PostgresClusterTests {
    private func withNodes(_ count: Int, _ body: ([PostgresJobStore], PostgresServer, String) async throws -> Void) async throws {
        try await withPostgresNodes(count, body)
    }

    /// Waiting jobs `j0...j(count-1)` with priorities 0...4 by id, inserted in id order.
    private func insertWaiting(_ count: Int, into store: PostgresJobStore) async throws -> [JobRecord] {
        try await store.insert((0..<count).map { index in
            var job = JobRecord.make("j\(index)")
            job.priority = index % 5
            return job
        })
    }

    /// The claim order: priority, highest first, then submission order.
    private func claimOrder(_ jobs: [JobRecord]) -> [String] {
        jobs.sorted { ($0.priority, -$0.sequence) > ($1.priority, -$1.sequence) }.map(\.id)
    }

    @Test func anObjectUploadRecordIsWrittenOnlyByTheOwnerOrWhileNobodyLiveOwnsTheJob() async throws {
        try await withNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            _ = try await insertWaiting(1, into: a)
            #expect(try await a.saveObjectUpload("{}", jobID: "gone", node: "a") == false, "no record for a job that is not stored")
            #expect(try await a.saveObjectUpload(#"{"n":0}"#, jobID: "j0", node: "a"), "nobody owns it")
            // A lease long enough for the next four calls on a loaded machine.
            _ = try await a.heartbeat(node: "a", lease: .seconds(4))
            let claimed = try await a.claim(node: "a", limit: 1, lease: .seconds(4))
            #expect(claimed.map(\.job.id) == ["j0"])
            #expect(claimed.first?.objectUpload == #"{"n":0}"# && claimed.first?.objectUploadRead == true, "the claim reads the record")
            #expect(try await a.saveObjectUpload(#"{"n":1}"#, jobID: "j0", node: "a"))
            #expect(try await b.saveObjectUpload(#"{"n":2}"#, jobID: "j0", node: "b") == false, "a owns it")
            #expect(try await b.saveObjectUpload(nil, jobID: "j0", node: "b") == false)
            #expect(try await b.objectUpload(jobID: "j0") == #"{"n":1}"#)
            try await Task.sleep(for: .milliseconds(4100))  // a's lease runs out
            #expect(try await b.saveObjectUpload(#"{"n":3}"#, jobID: "j0", node: "b"))
            #expect(try await a.objectUpload(jobID: "j0") == #"{"n":3}"#)
            #expect(try await b.claim(node: "b", limit: 1, lease: .seconds(4)).first?.objectUpload == #"{"n":3}"#)
            #expect(try await b.saveObjectUpload(nil, jobID: "j0", node: "b"))
            #expect(try await a.objectUpload(jobID: "j0") == nil)
            try await b.release(ids: ["j0"], node: "b")
            let again = try await b.claim(node: "b", limit: 1, lease: .seconds(4))
            #expect(again.first?.objectUpload == nil && again.first?.objectUploadRead == true, "no record: nil, read")
        }
    }

    @Test(arguments: [2, 3])
    func nodesClaimingAtOnceGetEveryJobExactlyOnceInPriorityOrder(nodes: Int) async throws {
        try await withNodes(nodes) { stores, _, _ in
            let jobs = try await insertWaiting(200, into: stores[0])
            // One node alone takes the ten first in claim order.
            let first = try await stores[0].claim(node: "node-0", limit: 10, lease: .seconds(30))
            #expect(first.map(\.job.id) == Array(claimOrder(jobs).prefix(10)))
            #expect(first.allSatisfy { $0.previousOwner == nil })

            // Then every node claims small batches at once until nothing is left.
            let claims = try await withThrowingTaskGroup(of: (Int, [[String]]).self) { group in
                for (index, store) in stores.enumerated() {
                    group.addTask {
                        var batches: [[String]] = []
                        while true {
                            let batch = try await store.claim(node: "node-\(index)", limit: 7, lease: .seconds(30))
                            if batch.isEmpty { return (index, batches) }
                            batches.append(batch.map(\.job.id))
                        }
                    }
                }
                return try await group.reduce(into: [Int: [[String]]]()) { $0[$1.0] = $1.1 }
            }
            let order = claimOrder(jobs)
            let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
            var claimedBy = Dictionary(uniqueKeysWithValues: first.map { ($0.job.id, 0) })
            for (node, batches) in claims {
                for batch in batches {
                    // Each batch comes in claim order.
                    #expect(batch.map { position[$0]! } == batch.map { position[$0]! }.sorted())
                    for id in batch {
                        #expect(claimedBy[id] == nil, "\(id) claimed by node \(claimedBy[id] ?? -1) and node \(node)")
                        claimedBy[id] = node
                    }
                }
            }
            #expect(claimedBy.count == 200)
            #expect(nodes == 2 || claims.values.filter { !$0.isEmpty }.count >= 2, "only one node got work: \(claims.mapValues(\.count))")
            // The database agrees on who owns what.
            let owners = try await stores[0].liveOwners()
            #expect(owners == claimedBy.mapValues { "node-\($0)" })
        }
    }

    @Test func aNodeThatStopsRenewingLosesItsJobsAndItsWritesAreRefused() async throws {
        try await withNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            let lease = Duration.seconds(1)
            _ = try await insertWaiting(6, into: a)
            let mine = try await a.claim(node: "a", limit: 5, lease: .seconds(30)).map(\.job)
            #expect(mine.count == 5)
            // While a's lease runs, b gets only the job a left.
            #expect(try await b.claim(node: "b", limit: 10, lease: .seconds(30)).map(\.job.id) == ["j5"])
            // a's last renewal, with a short lease (it replaces the longer one).
            #expect(try await a.renew(node: "a", lease: lease) == Set(mine.map(\.id)))

            // a stops renewing; after the lease b takes its jobs over.
            try await Task.sleep(for: .milliseconds(1300))
            let handed = try await b.claim(node: "b", limit: 10, lease: .seconds(30))
            #expect(Set(handed.map(\.job.id)) == Set(mine.map(\.id)))
            #expect(handed.allSatisfy { $0.previousOwner == "a" })
            #expect(try await a.renew(node: "a", lease: lease).isEmpty)

            // a's writes of those jobs are refused, with their events and notices; nothing of them is stored.
            var stale = mine[0]
            stale.state = .finished
            let notice = WebhookOutboxContractTests.notice("n-stale", job: stale.id, due: 1_795_000_000)
            let refused = try await a.commit(ClusterChange(
                updates: [stale], deletions: [mine[1].id], notices: [notice],
                events: [NewEvent(jobID: stale.id, kind: .job, data: Array("stale".utf8)),
                         NewEvent(jobID: mine[1].id, kind: .removed, data: [])]), node: "a")
            #expect(refused.refused == [mine[0].id: "b", mine[1].id: "b"])
            #expect(refused.events.isEmpty)
            #expect(try await a.job(id: mine[0].id)?.state == .waiting)
            #expect(try await a.job(id: mine[1].id) != nil)
            #expect(try await a.pendingNotices(limit: 10).isEmpty)
            #expect(try await a.events(after: 0, limit: 10).isEmpty)

            // b's own commit applies; finishing a job releases it in the same transaction.
            var done = mine[0]
            done.state = .finished
            var running = mine[2]
            running.state = .downloading
            let applied = try await b.commit(ClusterChange(
                updates: [done, running], events: [NewEvent(jobID: done.id, kind: .job, data: Array("done".utf8))]),
                node: "b")
            #expect(applied.refused.isEmpty)
            #expect(applied.events.map(\.jobID) == [done.id])
            #expect(try await b.job(id: done.id)?.state == .finished)
            let owners = try await b.liveOwners()
            #expect(owners[done.id] == nil)
            #expect(owners[running.id] == "b")
            // An unowned job may be changed by any node (it stays unowned).
            var paused = done
            paused.state = .paused
            #expect(try await a.commit(ClusterChange(updates: [paused]), node: "a").refused.isEmpty)
            #expect(try await a.job(id: done.id)?.state == .paused)
        }
    }

    @Test func aNodeWakingUpLateWritesNothingForAJobTakenSinceEvenWhenNobodyOwnsItNow() async throws {
        try await withNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            _ = try await insertWaiting(1, into: a)
            let held = try #require(try await a.claim(node: "a", limit: 1, lease: .seconds(1)).first)
            #expect(held.epoch == 1)
            // a is stopped past its lease; b takes the job over, finishes it and so releases it.
            try await Task.sleep(for: .milliseconds(1300))
            let taken = try #require(try await b.claim(node: "b", limit: 1, lease: .seconds(30)).first)
            #expect(taken.epoch == 2)
            var finished = taken.job
            finished.state = .finished
            #expect(try await b.commit(ClusterChange(updates: [finished], heldUnder: [finished.id: taken.epoch]),
                                       node: "b").refused.isEmpty)
            #expect(try await b.liveOwners().isEmpty)
            // a wakes up: its finish (with its notice and event) is refused, though nobody owns the job now.
            var late = held.job
            late.state = .finished
            late.filename = "late"
            let notice = WebhookOutboxContractTests.notice("n-late", job: late.id, due: 1_795_000_000)
            let refused = try await a.commit(ClusterChange(
                updates: [late], notices: [notice], events: [NewEvent(jobID: late.id, kind: .job, data: Array("late".utf8))],
                heldUnder: [late.id: held.epoch]), node: "a")
            #expect(refused.refused == [late.id: ""])
            #expect(try await a.job(id: late.id)?.filename != "late")
            #expect(try await a.pendingNotices(limit: 10).isEmpty)
            #expect(try await a.events(after: 0, limit: 10).isEmpty)
            // Nor does it record parts for it; b, under its epoch, may.
            #expect(try await a.saveObjectUpload("{}", jobID: late.id, node: "a", epoch: held.epoch) == false)
            #expect(try await b.saveObjectUpload("{}", jobID: late.id, node: "b", epoch: taken.epoch))
            // A change not made under a claim keeps the old rule: an unowned job may be changed by any node.
            #expect(try await a.commit(ClusterChange(updates: [finished]), node: "a").refused.isEmpty)
        }
    }

    @Test func acquireTakesAFreeOrExpiredJobAndNamesALiveOwner() async throws {
        try await withNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            _ = try await insertWaiting(2, into: a)
            let claimed = try await a.claim(node: "a", limit: 1, lease: .seconds(30))
            let id = try #require(claimed.first?.job.id)
            #expect(id == "j1")  // the higher priority
            guard case .owned(let owner, let until) = try await b.acquire(id: id, node: "b", lease: .seconds(30)) else {
                Issue.record("b acquired a job a owns")
                return
            }
            #expect(owner == "a")
            #expect(until > Date().addingTimeInterval(-5))
            // The owner itself may, and so may anyone for an unowned job or a missing one.
            guard case .acquired(let again, let epoch) = try await a.acquire(id: id, node: "a", lease: .seconds(30)) else {
                Issue.record("a could not acquire its own job")
                return
            }
            #expect(again == (try #require(try await a.job(id: id))))
            #expect(epoch == 1, "the owner acquiring its own job keeps its epoch")
            #expect(try await b.acquire(id: "missing", node: "b", lease: .seconds(30)) == .notFound)
            guard case .acquired(let other, _) = try await b.acquire(id: "j0", node: "b", lease: .seconds(30)) else {
                Issue.record("b could not acquire an unowned job")
                return
            }
            #expect(other.id == "j0")
            // Released, or expired: b takes it.
            #expect(try await a.release(ids: [id, "j0"], node: "a") == [id])  // j0 is b's: not released by a
            #expect(try await b.liveOwners() == ["j0": "b"])
            _ = try await a.acquire(id: id, node: "a", lease: .seconds(1))
            try await Task.sleep(for: .milliseconds(1300))
            guard case .acquired(_, let taken) = try await b.acquire(id: id, node: "b", lease: .seconds(30)) else {
                Issue.record("b could not acquire a job whose lease expired")
                return
            }
            #expect(taken == 2, "raised when another node takes it, not when the last to take it takes it again")
            #expect(try await b.liveOwners() == [id: "b", "j0": "b"])
            // Leaving gives everything back.
            #expect(try await b.leave(node: "b") == ["j0", "j1"])
            #expect(try await b.liveOwners().isEmpty)
        }
    }

    @Test func heartbeatsListTheLiveNodes() async throws {
        try await withNodes(2) { stores, _, _ in
            let first = try await stores[0].heartbeat(node: "a", lease: .seconds(30))
            #expect(first.map(\.id) == ["a"])
            let started = try #require(first.first?.startedAt)
            #expect(try await stores[1].heartbeat(node: "b", lease: .seconds(30)).map(\.id) == ["a", "b"])
            // a's last heartbeat before it goes quiet: a short lease (the one before is replaced, not extended).
            #expect(try await stores[0].heartbeat(node: "a", lease: .seconds(1)).first?.startedAt == started)
            try await Task.sleep(for: .milliseconds(1300))
            // a's lease ran out: not alive; its next heartbeat is a new start.
            #expect(try await stores[1].heartbeat(node: "b", lease: .seconds(30)).map(\.id) == ["b"])
            let again = try await stores[0].heartbeat(node: "a", lease: .seconds(30))
            #expect(again.map(\.id) == ["a", "b"])
            #expect(try #require(again.first?.startedAt) > started)
            try await stores[1].leave(node: "b")
            #expect(try await stores[0].heartbeat(node: "a", lease: .seconds(30)).map(\.id) == ["a"])
        }
    }

    @Test func eventsFromConcurrentWritersReadBackGaplessInIncreasingOrder() async throws {
        try await withNodes(4) { stores, _, _ in
            let writers = Array(stores.prefix(3))
            let reader = stores[3]
            let done = Flag()
            // The reader pages with `after: last` while the writers commit: an id committed below one already read
            // would never be read, and the comparison with what the writers got would catch it.
            async let read: [StoredEvent] = {
                var seen: [StoredEvent] = []
                var last: Int64 = 0
                while true {
                    let finished = done.isSet
                    let page = try await reader.events(after: last, limit: 50)
                    seen += page
                    last = page.last?.id ?? last
                    if page.isEmpty && finished { return seen }
                }
            }()
            let written = try await withThrowingTaskGroup(of: [StoredEvent].self) { group in
                for (index, store) in writers.enumerated() {
                    group.addTask {
                        var events: [StoredEvent] = []
                        for round in 0..<60 {
                            let change = ClusterChange(events: (0...(round % 3)).map { n in
                                NewEvent(jobID: "w\(index)-\(round)", kind: .job, data: Array("\(index)/\(round)/\(n)".utf8))
                            })
                            events += try await store.commit(change, node: "w\(index)").events
                        }
                        return events
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            done.set()
            let seen = try await read
            let expected = 3 * 20 * (1 + 2 + 3)
            #expect(written.count == expected)
            let outOfOrder = zip(seen, seen.dropFirst()).filter { $0.id >= $1.id }.map { "\($0.id) then \($1.id)" }
            #expect(outOfOrder.isEmpty, "ids read out of order: \(outOfOrder.prefix(5))")
            let missed = Set(written.map(\.id)).subtracting(seen.map(\.id)).sorted()
            #expect(missed.isEmpty, "\(missed.count) committed event(s) never read while writers ran, e.g. \(missed.prefix(5))")
            #expect(seen.count == written.count)
            #expect(try await reader.events(after: 0, limit: 10_000) == written.sorted { $0.id < $1.id }, "what is stored differs from what was committed")
            let window = try await reader.eventWindow()
            #expect(window == EventWindow(purgedThrough: 0, latest: try #require(seen.last?.id)))
        }
    }

    /// Events' data are bytes, not text: every byte value (NUL, backslash, quotes, bytes that are not UTF-8) comes
    /// back as committed, from the commit and from a read, several events of one commit each with its own slice.
    @Test func eventDataOfAnyBytesComeBackWhole() async throws {
        try await withNodes(1) { stores, _, _ in
            let store = stores[0]
            let datas: [[UInt8]] = [Array(0...255), [], Array("{\"a\":\"\\\"}".utf8), [0xff, 0xfe, 0x00, 0x5c, 0x78, 0xc3], [0x00]]
            let committed = try await store.commit(ClusterChange(events: datas.enumerated().map {
                NewEvent(jobID: "b\($0.offset)", kind: .job, data: $0.element, ownerKey: $0.offset == 2 ? "key-1" : nil)
            }), node: "a").events
            #expect(committed.map(\.data) == datas)
            #expect(committed.map(\.jobID) == datas.indices.map { "b\($0)" })
            let read = try await store.events(after: 0, limit: 100)
            #expect(read == committed)
            #expect(read[2].ownerKey == "key-1" && read[0].ownerKey == nil)
            #expect(read.map(\.id) == read.map(\.id).sorted() && read.first.map { $0.id > 0 } == true)
        }
    }

    @Test func purgingKeepsAReplayWindow() async throws {
        try await withNodes(1) { stores, _, _ in
            let store = stores[0]
            var ids: [Int64] = []
            for round in 0..<30 {
                ids += try await store.commit(ClusterChange(events: [NewEvent(jobID: "j\(round)", kind: .job, data: [UInt8(round)])]),
                                              node: "a").events.map(\.id)
            }
            #expect(try await store.purgeEvents(keepingNewest: 10, createdBefore: nil) == 20)
            let window = try await store.eventWindow()
            #expect(window == EventWindow(purgedThrough: ids[19], latest: ids[29]))
            #expect(window.canReplay(after: ids[19]) && !window.canReplay(after: ids[18]) && !window.canReplay(after: ids[29] + 1))
            #expect(try await store.events(after: 0, limit: 100).map(\.id) == Array(ids[20...]))
            #expect(try await store.events(after: 0, limit: 100).last?.data == [29])
            // By age: everything older than a moment from now goes; the window still knows the latest id.
            #expect(try await store.purgeEvents(keepingNewest: nil, createdBefore: Date().addingTimeInterval(60)) == 10)
            #expect(try await store.eventWindow() == EventWindow(purgedThrough: ids[29], latest: ids[29]))
            // Ids continue above.
            let next = try await store.commit(ClusterChange(events: [NewEvent(jobID: "k", kind: .removed, data: [])]), node: "a")
            #expect(try #require(next.events.first?.id) > ids[29])
        }
    }

    @Test func aCommitIsAllOrNothingAndInsertsUnownedJobs() async throws {
        try await withNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            let record = IdempotencyRecord(key: "k", requestHash: "h", status: 201, body: [1], createdAt: Date())
            let commit = try await a.commit(ClusterChange(
                inserts: [.make("x"), .make("y")], idempotencyRecord: record,
                events: [NewEvent(jobID: "x", kind: .job, data: [1]), NewEvent(jobID: "y", kind: .job, data: [2])]), node: "a")
            #expect(commit.inserted.map(\.id) == ["x", "y"])
            #expect(commit.events.map(\.jobID) == ["x", "y"])
            #expect(commit.events[1].id == commit.events[0].id + 1)
            #expect(try await b.idempotencyRecord(key: "k") == record.storedForm)
            #expect(try await b.liveOwners().isEmpty)
            // A duplicate id fails the whole commit: no event, no update.
            var changed = commit.inserted[0]
            changed.priority = 9
            await #expect(throws: JobStoreError.duplicateID("y")) {
                _ = try await b.commit(ClusterChange(inserts: [.make("y")], updates: [changed],
                                                     events: [NewEvent(jobID: "y", kind: .job, data: [3])]), node: "b")
            }
            #expect(try await a.job(id: "x")?.priority == 0)
            #expect(try await a.events(after: 0, limit: 10).map(\.jobID) == ["x", "y"])
        }
    }

    @Test func migratingFromSchemaFiveKeepsTheRowsAndContinuesEventIds() async throws {
        let server = try await PostgresServer.shared()
        let name = try await server.createDatabase()
        defer { server.dropDatabase(name) }
        let location = try #require(PostgresLocation(server.url(database: name)))
        let queue = DispatchQueue(label: "test.migration")
        // libpq blocks: on a thread of its own, never the concurrency pool's.
        try await offThePool { try queue.sync {
            let connection = try PostgresConnection(url: location.url, location: location.redacted, queue: queue)
            defer { connection.close() }
            // The version before the cluster's. Rows are written with today's insert, so the columns it names that 5
            // lacks are added first (schemas 8 and 11 add them only if missing).
            try PostgresSchema.migrate(connection, to: 5)
            #expect(try PostgresSchema.version(connection) == 5)
            _ = try connection.execute("ALTER TABLE jobs ADD COLUMN follows text, ADD COLUMN owner_key text", [], operation: "add columns")
            for job in [JobRecord.make("old-waiting"), .make("old-downloading", state: .downloading), .makeFull("old-failed")] {
                try connection.execute(PostgresJobRow.insertSQL, try PostgresJobRow.parameters(job.storedForm),
                                       operation: "insert an old row")
            }
            try connection.execute("INSERT INTO meta (key, value) VALUES ('event-id-high-water', '500000')",
                                   operation: "store a single node's event mark")
        } }
        let store = try await PostgresJobStore(location: location)
        #expect(try await store.schemaVersion() == PostgresSchema.currentVersion)
        let all = try await store.all()
        #expect(all.map(\.id) == ["old-waiting", "old-downloading", "old-failed"])
        #expect(all[2] == JobRecord.makeFull("old-failed").storedForm.with(sequence: all[2].sequence))
        // Unowned: both jobs that need running are claimable, the failed one is not.
        let claimed = try await store.claim(node: "a", limit: 10, lease: .seconds(30))
        #expect(Set(claimed.map(\.job.id)) == ["old-waiting", "old-downloading"])
        let event = try await store.commit(ClusterChange(events: [NewEvent(jobID: "old-waiting", kind: .job, data: [])]), node: "a")
        #expect(event.events.first?.id == 500_001)
        await store.close()
    }
}

/// A flag set once, read from any task.
private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

extension JobRecord {
    fileprivate func with(sequence: Int64) -> JobRecord {
        var copy = self
        copy.sequence = sequence
        return copy
    }
}
