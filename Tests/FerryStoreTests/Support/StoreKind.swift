import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// The `JobStore` implementations the contract suite runs against.
///
/// `postgres` runs on the test run's PostgreSQL server (`PostgresServer.shared()`), a fresh database per test; it is
/// left out only with `FERRY_SKIP_POSTGRES=1`: without PostgreSQL installed, its tests fail saying what to install.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case memory
    case postgres

    static var allCases: [StoreKind] {
        PostgresServer.isSkipped ? [.sqlite, .memory] : [.sqlite, .memory, .postgres]
    }

    var testDescription: String { rawValue }

    /// Opens a fresh store of this kind (in a new temporary directory, or a new database), runs `body`, then closes
    /// the store and removes the directory or database, whether `body` succeeds or throws.
    func withStore(_ body: (any JobStore) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-\(rawValue)")
        defer { directory.remove() }
        var database: (server: PostgresServer, name: String)?
        defer { database.map { $0.server.dropDatabase($0.name) } }
        let store: any JobStore
        switch self {
        case .sqlite:
            store = try await SQLiteJobStore(path: directory.path + "/jobs.sqlite")
        case .memory:
            store = MemoryJobStore()
        case .postgres:
            let server = try await PostgresServer.shared()
            let name = try await server.createDatabase()
            database = (server, name)
            store = try await PostgresJobStore(location: try #require(PostgresLocation(server.url(database: name))))
        }
        do {
            try await body(store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }
}
