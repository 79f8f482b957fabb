import FerryStore
import FerryTestSupport
import Foundation
import Logging
import Synchronization
import Testing
@testable import FerryService

/// `LiveSettings` and `RuntimeSettings` over real stores: where the starting values come from, a change stored before
/// it is applied, and a change the store refuses that changes nothing.
@Suite("Live settings")
struct LiveSettingsTests {
    let logger: Logger = {
        var logger = Logger(label: "live-settings-test")
        logger.logLevel = .critical
        return logger
    }()
    let flags = RuntimeSettings(maxBytesPerSecond: 2_000_000, maxConcurrent: 4)

    @Test func storedValuesWinOverTheFlagsFieldByField() {
        #expect(RuntimeSettings.starting(flags: flags, stored: StoredSettings()) == flags)
        #expect(RuntimeSettings.starting(flags: flags, stored: StoredSettings(maxConcurrent: 9))
            == RuntimeSettings(maxBytesPerSecond: 2_000_000, maxConcurrent: 9))
        #expect(RuntimeSettings.starting(flags: flags, stored: StoredSettings(maxBytesPerSecond: .some(nil)))
            == RuntimeSettings(maxBytesPerSecond: nil, maxConcurrent: 4))
        #expect(RuntimeSettings.starting(flags: flags, stored: StoredSettings(maxBytesPerSecond: .some(5), maxConcurrent: 1))
            == RuntimeSettings(maxBytesPerSecond: 5, maxConcurrent: 1))
    }

    @Test func aChangeIsStoredAppliedAndFoundAgainAtTheNextStart() async throws {
        let spool = try Fixture.tempDirectory("ferry-live-settings")
        defer { Fixture.removeTree(spool) }
        let store = try await SQLiteJobStore(path: spool + "/ferry.db")
        let applied = Mutex<[RuntimeSettings]>([])
        let start = try await LiveSettings.starting(flags: flags, store: store, logger: logger)
        #expect(start == flags)
        let settings = LiveSettings(current: start, store: store, logger: logger) { new in applied.withLock { $0.append(new) } }
        let changed = try await settings.change(StoredSettings(maxBytesPerSecond: .some(nil)))
        #expect(changed == RuntimeSettings(maxBytesPerSecond: nil, maxConcurrent: 4))
        #expect(await settings.current == changed)
        // The same value again is stored but applies nothing new.
        _ = try await settings.change(StoredSettings(maxBytesPerSecond: .some(nil)))
        #expect(applied.withLock { $0 } == [changed])
        await store.close()

        let reopened = try await SQLiteJobStore(path: spool + "/ferry.db")
        #expect(try await LiveSettings.starting(flags: flags, store: reopened, logger: logger) == changed)
        await reopened.close()
    }

    @Test func aChangeTheStoreRefusesChangesNothing() async throws {
        let spool = try Fixture.tempDirectory("ferry-live-settings")
        defer { Fixture.removeTree(spool) }
        let store = try await SQLiteJobStore(path: spool + "/ferry.db")
        let applied = Mutex(0)
        let settings = LiveSettings(current: flags, store: store, logger: logger) { _ in applied.withLock { $0 += 1 } }
        await store.close()
        do {
            _ = try await settings.change(StoredSettings(maxConcurrent: 8))
            Issue.record("a change the store refused was answered as done")
        } catch {
            #expect(error.description.contains("could not be saved"))
        }
        #expect(await settings.current == flags)
        #expect(applied.withLock { $0 } == 0)
    }
}
