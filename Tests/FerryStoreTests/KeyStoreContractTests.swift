import Foundation
import Testing
@testable import FerryStore

/// API keys and jobs' owners (schema 11) and keys' usage (schema 12), the same on every `JobStore`.
@Suite("JobStore contract: API keys")
struct KeyStoreContractTests {
    static func key(_ id: String, digest: String? = nil, at seconds: Double = 1_795_000_000.123_4) -> APIKeyRecord {
        APIKeyRecord(id: id, name: "app \(id)", scope: .write,
                     limits: APIKeyRecord.Limits(maxActiveJobs: 4, maxJobs: 0, bytesPerDay: 1 << 40),
                     digest: digest ?? String(repeating: id, count: 64 / id.count),
                     createdAt: Date(timeIntervalSince1970: seconds))
    }

    @Test(arguments: StoreKind.allCases)
    func keysAreStoredReadChangedAndDeleted(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.keys().isEmpty)
            let b = Self.key("b", at: 1_795_000_001), a = Self.key("a", at: 1_795_000_002)
            try await store.insertKey(b)
            try await store.insertKey(a)
            #expect(try await store.keys() == [b.storedForm, a.storedForm])  // oldest first
            #expect(try await store.key(id: "a") == a.storedForm)
            #expect(try await store.key(id: "zz") == nil)
            await #expect(throws: JobStoreError.self) { try await store.insertKey(Self.key("a", digest: "other")) }

            var changed = a
            changed.name = "renamed"
            changed.scope = .admin
            changed.limits = APIKeyRecord.Limits(maxBytesPerSecond: 1000)
            try await store.updateKey(changed)
            #expect(try await store.key(id: "a") == changed.storedForm)
            await #expect(throws: JobStoreError.self) { try await store.updateKey(Self.key("missing")) }

            let used = Date(timeIntervalSince1970: 1_795_000_100.000_6)
            try await store.touchKeys(["a": used, "gone": used])
            #expect(try await store.key(id: "a")?.lastUsedAt == StoredDate.normalize(used))
            #expect(try await store.key(id: "b")?.lastUsedAt == nil)

            #expect(try await store.deleteKey(id: "a"))
            #expect(try await !store.deleteKey(id: "a"))
            #expect(try await store.keys().map(\.id) == ["b"])
        }
    }

    /// A job keeps its owner; `JobFilter.ownerKey` lists one key's jobs, alone or with the other conditions, and pages.
    @Test(arguments: StoreKind.allCases)
    func jobsAreListedByOwner(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var jobs: [JobRecord] = []
            for index in 0..<7 {
                var job = JobRecord.make("j\(index)", state: index == 3 ? .paused : .waiting,
                                         tags: index.isMultiple(of: 2) ? ["even"] : [])
                job.ownerKey = index < 5 ? (index.isMultiple(of: 2) ? "k1" : "k2") : nil
                jobs.append(job)
            }
            _ = try await store.insert(jobs)
            #expect(try await store.job(id: "j0")?.ownerKey == "k1")
            #expect(try await store.job(id: "j6")?.ownerKey == nil)
            let first = try await store.list(JobFilter(ownerKey: "k1"), after: nil, limit: 2)
            #expect(first.jobs.map(\.id) == ["j0", "j2"])
            let second = try await store.list(JobFilter(ownerKey: "k1"), after: first.next, limit: 2)
            #expect(second.jobs.map(\.id) == ["j4"])
            #expect(second.next == nil)
            #expect(try await store.list(JobFilter(states: [.paused], ownerKey: "k2"), after: nil, limit: 10).jobs.map(\.id) == ["j3"])
            #expect(try await store.list(JobFilter(tag: "even", ownerKey: "k2"), after: nil, limit: 10).jobs.isEmpty)
            #expect(try await store.list(JobFilter(tag: "even", ownerKey: "k1"), after: nil, limit: 10).jobs.count == 3)
            #expect(try await store.list(JobFilter(ownerKey: "nobody"), after: nil, limit: 10).jobs.isEmpty)

            var moved = try #require(try await store.job(id: "j6"))
            moved.ownerKey = "k2"
            try await store.update(moved)
            #expect(try await store.list(JobFilter(ownerKey: "k2"), after: nil, limit: 10).jobs.map(\.id) == ["j1", "j3", "j6"])
        }
    }

    /// Usage adds up per key and bucket, over calls; old buckets are purged; reads take the asked keys from a bucket.
    @Test(arguments: StoreKind.allCases)
    func keyUsageAddsUpAndOldBucketsArePurged(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.keyUsage(keys: ["a"], since: 0).isEmpty)
            try await store.addKeyUsage([KeyUsage(key: "a", bucket: 100, bytes: 5), KeyUsage(key: "a", bucket: 101, bytes: 7),
                                         KeyUsage(key: "b", bucket: 101, bytes: 1 << 40)], purgingBefore: 0)
            try await store.addKeyUsage([KeyUsage(key: "a", bucket: 101, bytes: 3)], purgingBefore: 0)
            func read(_ keys: [String], since: Int64) async throws -> Set<KeyUsage> {
                Set(try await store.keyUsage(keys: keys, since: since))
            }
            #expect(try await read(["a"], since: 0) == [KeyUsage(key: "a", bucket: 100, bytes: 5),
                                                       KeyUsage(key: "a", bucket: 101, bytes: 10)])
            #expect(try await read(["a", "b"], since: 101) == [KeyUsage(key: "a", bucket: 101, bytes: 10),
                                                              KeyUsage(key: "b", bucket: 101, bytes: 1 << 40)])
            #expect(try await read(["nobody"], since: 0).isEmpty)
            // Nothing added: only the purge.
            try await store.addKeyUsage([], purgingBefore: 101)
            #expect(try await read(["a", "b"], since: 0) == [KeyUsage(key: "a", bucket: 101, bytes: 10),
                                                            KeyUsage(key: "b", bucket: 101, bytes: 1 << 40)])
        }
    }
}
