import FerryCore
import Foundation
import Testing
@testable import FerryStore

/// Fetch-through's entries (schema 10), the same in every `JobStore`.
@Suite("JobStore contract: fetch-through entries")
struct FetchEntryContractTests {
    private static let base = Date(timeIntervalSince1970: 1_795_000_000.1234)

    private static func entry(_ id: String, key: String, used: Double = 0) -> FetchEntryRecord {
        FetchEntryRecord(jobID: id, cacheKey: key, freshUntil: base.addingTimeInterval(60.0004),
                         staleIfErrorUntil: base.addingTimeInterval(86_460), lifetime: 60.0004,
                         lastUsed: base.addingTimeInterval(used))
    }

    @Test(arguments: StoreKind.allCases)
    func savedEntriesReadBackOnTheMillisecondGrid(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a"), .make("b")])
            #expect(try await store.fetchEntries() == [])
            let a = Self.entry("a", key: "http://o.test/a")
            try await store.saveFetchEntry(a)
            try await store.saveFetchEntry(Self.entry("b", key: "http://o.test/b?v=1"))
            let read = try await store.fetchEntries()
            #expect(read == [a.storedForm, Self.entry("b", key: "http://o.test/b?v=1").storedForm])
            #expect(read[0].lifetime == 60)
            #expect(StoredDate.milliseconds(read[0].freshUntil) == 1_795_000_060_124)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func savingAgainReplacesAndDeletingRemoves(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a")])
            try await store.saveFetchEntry(Self.entry("a", key: "k"))
            var refreshed = Self.entry("a", key: "k", used: 30)
            refreshed.freshUntil = Self.base.addingTimeInterval(90)
            try await store.saveFetchEntry(refreshed)
            #expect(try await store.fetchEntries() == [refreshed.storedForm])
            try await store.deleteFetchEntry(jobID: "a")
            try await store.deleteFetchEntry(jobID: "never")
            #expect(try await store.fetchEntries() == [])
        }
    }

    @Test(arguments: StoreKind.allCases)
    func anEntryGoesWithItsJob(kind: StoreKind) async throws {
        try await kind.withStore { store in
            _ = try await store.insert([.make("a"), .make("b")])
            try await store.saveFetchEntry(Self.entry("a", key: "ka"))
            try await store.saveFetchEntry(Self.entry("b", key: "kb"))
            #expect(try await store.delete(id: "a"))
            try await store.apply(updates: [], deletions: ["b"])
            #expect(try await store.fetchEntries() == [])
        }
    }
}
