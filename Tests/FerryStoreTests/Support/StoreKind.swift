import Foundation
import Testing
@testable import FerryStore

/// The `JobStore` implementations the contract suite runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case memory

    var testDescription: String { rawValue }

    /// Opens a fresh store of this kind in a new temporary directory, runs `body`, then closes the store and
    /// removes the directory, whether `body` succeeds or throws.
    func withStore(_ body: (any JobStore) async throws -> Void) async throws {
        let directory = try TemporaryDirectory(prefix: "ferry-store-\(rawValue)")
        defer { directory.remove() }
        let store: any JobStore = switch self {
        case .sqlite: try SQLiteJobStore(path: directory.path + "/jobs.sqlite")
        case .memory: MemoryJobStore()
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
