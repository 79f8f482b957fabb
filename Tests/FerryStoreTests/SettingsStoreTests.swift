import Foundation
import Testing
@testable import FerryStore

/// The runtime settings part of the `JobStore` contract (`settings()`, `saveSettings(_:)`), run against each
/// implementation, and their durability in SQLite.
@Suite("JobStore settings")
struct SettingsStoreTests {
    @Test(arguments: StoreKind.allCases)
    func aFreshStoreHasNoSettings(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let settings = try await store.settings()
            #expect(settings == StoredSettings())
            #expect(settings.isEmpty)
        }
    }

    @Test(arguments: StoreKind.allCases)
    func savingOneFieldLeavesTheOtherAsStored(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.saveSettings(StoredSettings(maxBytesPerSecond: .some(1_500_000)))
            #expect(try await store.settings() == StoredSettings(maxBytesPerSecond: .some(1_500_000)))
            try await store.saveSettings(StoredSettings(maxConcurrent: 7))
            #expect(try await store.settings() == StoredSettings(maxBytesPerSecond: .some(1_500_000), maxConcurrent: 7))
            try await store.saveSettings(StoredSettings(maxBytesPerSecond: .some(2_000), maxConcurrent: 3))
            #expect(try await store.settings() == StoredSettings(maxBytesPerSecond: .some(2_000), maxConcurrent: 3))
            try await store.saveSettings(StoredSettings())  // nothing to change
            #expect(try await store.settings() == StoredSettings(maxBytesPerSecond: .some(2_000), maxConcurrent: 3))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func noLimitIsStoredAsAChoiceNotAsNeverSet(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.saveSettings(StoredSettings(maxBytesPerSecond: .some(5_000)))
            try await store.saveSettings(StoredSettings(maxBytesPerSecond: .some(nil)))
            let settings = try await store.settings()
            #expect(settings.maxBytesPerSecond == .some(nil))
            #expect(!settings.isEmpty)
            #expect(settings.maxConcurrent == nil)
        }
    }

    @Test func sqliteSettingsSurviveReopening() async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-settings")
        defer { directory.remove() }
        let path = directory.path + "/jobs.sqlite"
        let store = try await SQLiteJobStore(path: path)
        try await store.saveSettings(StoredSettings(maxBytesPerSecond: .some(nil), maxConcurrent: 9))
        await store.close()

        let reopened = try await SQLiteJobStore(path: path)
        #expect(try await reopened.settings() == StoredSettings(maxBytesPerSecond: .some(nil), maxConcurrent: 9))
        try await reopened.saveSettings(StoredSettings(maxBytesPerSecond: .some(42)))
        await reopened.close()

        let again = try await SQLiteJobStore(path: path)
        #expect(try await again.settings() == StoredSettings(maxBytesPerSecond: .some(42), maxConcurrent: 9))
        await again.close()
    }

    @Test func mergingReplacesOnlyTheFieldsGiven() {
        let stored = StoredSettings(maxBytesPerSecond: .some(10), maxConcurrent: 2)
        #expect(stored.merging(StoredSettings()) == stored)
        #expect(stored.merging(StoredSettings(maxBytesPerSecond: .some(nil))) == StoredSettings(maxBytesPerSecond: .some(nil), maxConcurrent: 2))
        #expect(stored.merging(StoredSettings(maxConcurrent: 5)) == StoredSettings(maxBytesPerSecond: .some(10), maxConcurrent: 5))
    }
}
