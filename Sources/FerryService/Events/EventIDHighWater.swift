import FerryStore
import Synchronization

/// Keeps event ids increasing across restarts: a high-water mark is stored ahead of the ids in
/// use, in blocks, and the next run starts above it. `stored` is the only mutable state, under its mutex.
final class EventIDHighWater: Sendable {
    static let key = "event-id-high-water"
    static let block: Int64 = 100_000
    private let store: any JobStore
    /// The highest mark written to the store.
    private let stored: Mutex<Int64>
    let startAfter: Int64

    private init(store: any JobStore, stored: Int64) {
        self.store = store
        self.stored = Mutex(stored)
        self.startAfter = stored
    }

    /// Reads the stored mark and moves it a block ahead. When the disk is too full for that write, Ferry
    /// still starts: ids continue after the stored mark (every id issued before is below it), and the
    /// mark is written by the first `cover` that finds room, before any event goes out.
    static func load(store: any JobStore) async throws -> EventIDHighWater {
        let previous = try await store.value(forKey: key).flatMap { Int64($0) } ?? 0
        let mark = EventIDHighWater(store: store, stored: previous)
        do {
            try await mark.cover(previous + 1)
        } catch let error as JobStoreError where error.isOutOfSpace {
            // Nothing was published yet; `cover` runs again before the first event is.
        }
        return mark
    }

    /// Makes sure the stored mark is above `id` before events up to it are published.
    func cover(_ id: Int64) async throws {
        let current = stored.withLock { $0 }
        guard id + Self.block / 2 > current else { return }
        let next = id + Self.block
        try await store.setValue(String(next), forKey: Self.key)
        stored.withLock { $0 = max($0, next) }
    }
}
