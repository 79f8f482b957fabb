/// What a `JobStore` call can fail with. Each case says where it came from; only FerryService maps it to HTTP.
public enum JobStoreError: Error, Equatable, Sendable {
    /// No job with this id (from `update`).
    case notFound(String)
    /// SQLite said no: its (extended) result code, its message, and what the store was doing.
    case sqlite(code: Int32, message: String, operation: String)
    /// The stored data cannot be what Ferry wrote: not a database, an unknown schema version, an unreadable row.
    case corrupt(String)
    /// A `list` cursor that no store issued. The associated value is the cursor as given.
    case invalidCursor(String)
    /// `insert` was given an id that is already stored (or twice in one batch). Nothing of the batch was stored.
    case duplicateID(String)
}

extension JobStoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notFound(let id): "no job with id \(id)"
        case .sqlite(let code, let message, let operation): "SQLite error \(code) during \(operation): \(message)"
        case .corrupt(let detail): "job store is corrupt: \(detail)"
        case .invalidCursor(let cursor): "invalid cursor \"\(cursor)\": pass back the `next` value of a previous page"
        case .duplicateID(let id): "a job with id \(id) already exists"
        }
    }
}

extension JobStoreError {
    /// True when the failure means the disk (or its quota) is full: SQLite's `SQLITE_FULL`, or an I/O
    /// error, which is how SQLite reports ENOSPC while growing its WAL or shared-memory files.
    public var isOutOfSpace: Bool {
        guard case .sqlite(let code, _, _) = self else { return false }
        let primary = code & 0xFF
        return primary == 13 /* SQLITE_FULL */ || primary == 10 /* SQLITE_IOERR */
    }
}
