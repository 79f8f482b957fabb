/// What a `JobStore` call can fail with. Each case says where it came from; only FerryService maps it to HTTP.
public enum JobStoreError: Error, Equatable, Sendable {
    /// No job with this id (from `update`).
    case notFound(String)
    /// SQLite said no: its (extended) result code, its message, and what the store was doing.
    case sqlite(code: Int32, message: String, operation: String)
    /// PostgreSQL (or libpq) said no: the five-character SQLSTATE, the server's message, and what the store was
    /// doing. Failures with no SQLSTATE of their own carry the standard's connection classes: `08001` when no
    /// connection could be made, `08006` when it was lost.
    case postgres(sqlstate: String, message: String, operation: String)
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
        case .postgres(let sqlstate, let message, let operation): "PostgreSQL error \(sqlstate) during \(operation): \(message)"
        case .corrupt(let detail): "job store is corrupt: \(detail)"
        case .invalidCursor(let cursor): "invalid cursor \"\(cursor)\": pass back the `next` value of a previous page"
        case .duplicateID(let id): "a job with id \(id) already exists"
        }
    }
}

extension JobStoreError {
    /// True when the failure means the disk (or its quota) is full: SQLite's `SQLITE_FULL`, or an I/O
    /// error, which is how SQLite reports ENOSPC while growing its WAL or shared-memory files.
    /// PostgreSQL's `53100` (disk_full) counts too, though the full disk is then the database server's.
    public var isOutOfSpace: Bool {
        switch self {
        case .sqlite(let code, _, _):
            let primary = code & 0xFF
            return primary == 13 /* SQLITE_FULL */ || primary == 10 /* SQLITE_IOERR */
        case .postgres(let sqlstate, _, _):
            return sqlstate == "53100"
        default:
            return false
        }
    }

    /// True when PostgreSQL gave a transaction up because of a concurrent one (`40001` serialization_failure,
    /// `40P01` deadlock_detected): nothing of it was stored, and the same call may be made again at once.
    public var isConflict: Bool {
        guard case .postgres(let sqlstate, _, _) = self else { return false }
        return sqlstate == "40001" || sqlstate == "40P01"
    }

    /// True when the database could not be reached or went away (PostgreSQL: class `08`, connection exceptions, and
    /// `57P01`...`57P03`, a server shutting down or starting): the same call may succeed later.
    public var isUnavailable: Bool {
        guard case .postgres(let sqlstate, _, _) = self else { return false }
        return sqlstate.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlstate)
    }
}
