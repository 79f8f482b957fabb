import Synchronization

/// How much of each job's partial file its writer has written without a gap from offset 0, published by the writer
/// (`FileWriter`) after every write, so that a reader following the file while it grows (`FollowStream`) is woken by
/// the write instead of polling, and reads only bytes already written.
///
/// Owner: one `Mutex` guards the table (writers publish from their own queues, readers watch from theirs). Watchers'
/// handlers run outside it, on the publishing writer's queue, so they only hand the news on (a hop to the reader's
/// queue); they must not call back into the table.
public final class GrowingFiles: Sendable {
    /// What a reader may read of a partial file.
    public struct Extent: Equatable, Sendable {
        /// Bytes [0, prefix) are written (returned by `pwrite`: any reader of the file sees them).
        public var prefix: Int64
        /// Counts the times the file was emptied: bytes a reader took from an earlier generation are not this file's.
        public var generation: Int
        /// The writer finished, paused or stopped: no more bytes come from it (a later writer starts a new extent).
        public var closed: Bool

        public init(prefix: Int64, generation: Int, closed: Bool) {
            self.prefix = prefix
            self.generation = generation
            self.closed = closed
        }
    }

    public typealias Watcher = @Sendable (Extent) -> Void

    private struct Entry {
        var extent: Extent?
        var watchers: [Int: Watcher] = [:]
    }

    private struct Table {
        var entries: [String: Entry] = [:]
        var nextToken = 0
    }

    private let table = Mutex(Table())

    public init() {}

    /// The extent last published for `jobID`, nil when no writer published one since the last watcher left.
    public func extent(_ jobID: String) -> Extent? {
        table.withLock { $0.entries[jobID]?.extent }
    }

    /// True while a reader watches `jobID` (its writer then keeps the bytes in the page cache, where the reader reads).
    public func isWatched(_ jobID: String) -> Bool {
        table.withLock { $0.entries[jobID]?.watchers.isEmpty == false }
    }

    /// Calls `handler` after each change of `jobID`'s extent, until `unwatch` with the returned token.
    public func watch(_ jobID: String, _ handler: @escaping Watcher) -> Int {
        table.withLock { table in
            table.nextToken += 1
            table.entries[jobID, default: Entry()].watchers[table.nextToken] = handler
            return table.nextToken
        }
    }

    public func unwatch(_ jobID: String, token: Int) {
        table.withLock { table in
            table.entries[jobID]?.watchers[token] = nil
            if let entry = table.entries[jobID], entry.watchers.isEmpty, entry.extent?.closed != false {
                table.entries[jobID] = nil
            }
        }
    }

    /// The writer opened the file holding `prefix` contiguous bytes, or wrote up to `prefix`.
    func publish(_ jobID: String, prefix: Int64) {
        change(jobID) { Extent(prefix: prefix, generation: $0?.generation ?? 0, closed: false) }
    }

    /// The writer emptied the file: a new generation from zero.
    func emptied(_ jobID: String) {
        change(jobID) { extent in Extent(prefix: 0, generation: (extent?.generation ?? 0) + 1, closed: false) }
    }

    /// The writer closed the file (finished, paused, stopped).
    func closed(_ jobID: String) {
        change(jobID) { extent in
            extent.map { Extent(prefix: $0.prefix, generation: $0.generation, closed: true) }
        }
        table.withLock { table in
            if let entry = table.entries[jobID], entry.watchers.isEmpty { table.entries[jobID] = nil }
        }
    }

    /// Applies `update` and tells the watchers when the extent changed. An entry nobody watches keeps only its
    /// extent (the last one wins), so a job's first reader finds where the writer is.
    private func change(_ jobID: String, _ update: (Extent?) -> Extent?) {
        let (extent, watchers) = table.withLock { table -> (Extent?, [Watcher]) in
            let old = table.entries[jobID]?.extent
            let new = update(old)
            guard new != old else { return (nil, []) }
            table.entries[jobID, default: Entry()].extent = new
            return (new, table.entries[jobID].map { Array($0.watchers.values) } ?? [])
        }
        guard let extent else { return }
        for watcher in watchers { watcher(extent) }
    }
}
