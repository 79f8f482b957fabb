import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// A key's `maxActiveJobs` held across nodes by `claim(node:limit:lease:keyCaps:)` on a real PostgreSQL (issue 29:
/// "a key's maxActiveJobs counts its jobs on every node").
@Suite("PostgresJobStore, key caps across nodes", .enabled(if: !PostgresServer.isSkipped))
struct PostgresKeyCapTests {
    /// `count` waiting jobs `prefix0...` owned by `key` (nil: the administrator's), inserted in order.
    private func insert(_ count: Int, _ prefix: String, key: String?, into store: PostgresJobStore) async throws {
        _ = try await store.insert((0..<count).map { index in
            var job = JobRecord.make("\(prefix)\(index)")
            job.ownerKey = key
            return job
        })
    }

    private func owned(_ claimed: [ClaimedJob], key: String, of all: [JobRecord]) -> Int {
        let ids = Set(all.filter { $0.ownerKey == key }.map(\.id))
        return claimed.filter { ids.contains($0.job.id) }.count
    }

    @Test func aCappedKeysJobsAreClaimedOnlyUpToItsCapOverEveryNode() async throws {
        try await withPostgresNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            try await insert(5, "k", key: "key-k", into: a)
            try await insert(3, "free", key: nil, into: a)
            try await insert(2, "other", key: "key-o", into: a)
            let caps: [String: Int64] = ["key-k": 2]
            let first = try await a.claim(node: "a", limit: 4, lease: .seconds(30), keyCaps: caps)
            // Claim order is submission order here: k0, k1, then k2... are passed over for the cap.
            #expect(first.map(\.job.id) == ["k0", "k1", "free0", "free1"])
            let second = try await b.claim(node: "b", limit: 10, lease: .seconds(30), keyCaps: caps)
            #expect(Set(second.map(\.job.id)) == ["free2", "other0", "other1"], "b takes no k job: a holds the cap")
            #expect(try await b.claim(node: "b", limit: 10, lease: .seconds(30), keyCaps: caps).isEmpty)
            // a gives one back (it paused or ended): b may take one more of k, the next in order.
            #expect(try await a.release(ids: ["k0"], node: "a") == ["k0"])
            var paused = try #require(try await a.job(id: "k0"))
            paused.state = .paused
            try await a.update(paused)
            #expect(try await b.claim(node: "b", limit: 10, lease: .seconds(30), keyCaps: caps).map(\.job.id) == ["k2"])
            // A raised cap lets more through; without caps every job is claimable.
            #expect(try await b.claim(node: "b", limit: 10, lease: .seconds(30), keyCaps: ["key-k": 3]).map(\.job.id) == ["k3"])
            #expect(try await a.claim(node: "a", limit: 10, lease: .seconds(30)).map(\.job.id) == ["k4"])
        }
    }

    @Test func anExpiredLeaseNoLongerCountsAgainstTheCap() async throws {
        try await withPostgresNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            try await insert(3, "k", key: "key-k", into: a)
            let caps: [String: Int64] = ["key-k": 1]
            #expect(try await a.claim(node: "a", limit: 10, lease: .seconds(1), keyCaps: caps).map(\.job.id) == ["k0"])
            #expect(try await b.claim(node: "b", limit: 10, lease: .seconds(30), keyCaps: caps).isEmpty)
            try await Task.sleep(for: .milliseconds(1300))
            // a's lease ran out: its job is claimable again, and counts no more.
            let taken = try await b.claim(node: "b", limit: 10, lease: .seconds(30), keyCaps: caps)
            #expect(taken.map(\.job.id) == ["k0"])
            #expect(taken.first?.previousOwner == "a")
        }
    }

    /// Rounds of every node claiming at the same moment, then giving everything back. (Two claims counting from the
    /// same snapshot pick the same allowed jobs and `SKIP LOCKED` keeps them apart; the advisory lock covers claims
    /// whose snapshots differ by a third commit, which a test cannot time from outside.)
    @Test(arguments: [2, 3])
    func nodesClaimingAtOnceNeverHoldMoreThanTheCap(nodes: Int) async throws {
        try await withPostgresNodes(nodes) { stores, _, _ in
            try await insert(10, "k", key: "key-k", into: stores[0])
            try await insert(10, "free", key: nil, into: stores[0])
            let all = try await stores[0].all()
            let caps: [String: Int64] = ["key-k": 1]
            for round in 0..<30 {
                let claimed = try await withThrowingTaskGroup(of: (String, [ClaimedJob]).self) { group in
                    for (index, store) in stores.enumerated() {
                        group.addTask {
                            ("node-\(index)", try await store.claim(node: "node-\(index)", limit: 3, lease: .seconds(30), keyCaps: caps))
                        }
                    }
                    return try await group.reduce(into: [(String, [ClaimedJob])]()) { $0.append($1) }
                }
                let jobs = claimed.flatMap(\.1)
                #expect(owned(jobs, key: "key-k", of: all) == 1, "round \(round): \(jobs.map(\.job.id))")
                #expect(Set(jobs.map(\.job.id)).count == jobs.count, "a job claimed twice")
                for (node, mine) in claimed {
                    _ = try await stores[0].release(ids: mine.map(\.job.id), node: node)
                }
            }
        }
    }

    @Test func downloadingJobsAreCountedByKeyAndNodeUnderRunningLeases() async throws {
        try await withPostgresNodes(2) { stores, _, _ in
            let (a, b) = (stores[0], stores[1])
            _ = try await a.insert((0..<6).map { index in
                var job = JobRecord.make("d\(index)", state: index == 5 ? .waiting : .downloading)
                job.ownerKey = index < 4 ? "key-k" : "key-o"
                return job
            })
            _ = try await a.claim(node: "a", limit: 3, lease: .seconds(30))  // d0, d1, d2
            // b's leases are short, so that they run out below; the counts while they run are asked only while
            // they surely do (a loaded machine may take longer than the lease to get here).
            let claimedAt = ContinuousClock.now
            _ = try await b.claim(node: "b", limit: 2, lease: .seconds(4))   // d3, d4
            let both = try await a.downloadingJobs(ofKeys: ["key-k", "key-o"])
            let other = try await a.downloadingJobs(ofKeys: ["key-o"])
            if ContinuousClock.now - claimedAt < .seconds(3) {
                #expect(both == ["key-k": ["a": 3, "b": 1], "key-o": ["b": 1]])
                #expect(other == ["key-o": ["b": 1]])
            }
            #expect(try await a.downloadingJobs(ofKeys: []) == [:])
            try await Task.sleep(until: claimedAt + .milliseconds(4300))
            #expect(try await a.downloadingJobs(ofKeys: ["key-k", "key-o"]) == ["key-k": ["a": 3]], "b's leases ran out")
        }
    }
}
