import CSQLite
import Dispatch
import Foundation

/// The default `JobStore`: one SQLite database file (in the spool), WAL journal, `synchronous=FULL`.
///
/// A private serial `DispatchQueue` owns the connection and its prepared statements; every database call runs there
/// (checked with `dispatchPrecondition`). The async methods hand their work to that queue and suspend on a
/// continuation, so blocking file I/O and fsyncs never run on Swift's cooperative pool. Each mutating call is
/// its own transaction and, with `synchronous=FULL`, is on disk when it returns. Dates are kept to the millisecond
/// (`StoredDate`). Other processes may open the file; they wait up to `busyTimeoutMilliseconds` for a lock.
public final class SQLiteJobStore: SQLJobStore, @unchecked Sendable {
    public let path: String
    /// How long a call waits for another connection's lock before failing with `SQLITE_BUSY`.
    public static let busyTimeoutMilliseconds: Int32 = 5000

    let confined: ConfinedConnection<SQLiteConnection>

    /// Opens or creates the database at `path` and migrates it to the current schema, on the store's queue.
    /// - Throws: `JobStoreError.corrupt` when the file is not a SQLite database or was written by a newer Ferry;
    ///   `JobStoreError.sqlite` for anything else SQLite refuses (unwritable directory, ...).
    public init(path: String) async throws {
        self.path = path
        confined = try await ConfinedConnection(label: "ferry.store.sqlite", open: { try SQLiteConnection(path: path, queue: $0) }) { connection in
            do {
                try Self.configure(connection)
                try SQLiteSchema.migrate(connection)
            } catch let error as JobStoreError {
                throw Self.explainOpenFailure(error, path: path)
            }
        }
    }

    /// The value of a PRAGMA (e.g. `journal_mode`), for diagnostics and tests.
    func pragma(_ name: String) async throws -> String? {
        try await perform { connection in
            try connection.withStatement("PRAGMA \(name)", operation: "read PRAGMA \(name)") { statement in
                try statement.step() ? statement.string(at: 0) : nil
            }
        }
    }

    // MARK: Opening

    private static func configure(_ connection: SQLiteConnection) throws {
        try connection.setBusyTimeout(milliseconds: busyTimeoutMilliseconds)
        // The first statement that reads the file: a file that is not a database fails here with SQLITE_NOTADB.
        let mode = try connection.withStatement("PRAGMA journal_mode = WAL", operation: "set journal_mode") {
            try $0.step() ? $0.string("journal_mode") : nil
        }
        guard mode?.lowercased() == "wal" else {
            throw JobStoreError.sqlite(code: SQLITE_ERROR, message: "journal_mode is \(mode ?? "unknown"), not wal",
                                       operation: "set journal_mode")
        }
        try connection.executeScript("PRAGMA synchronous = FULL", operation: "set synchronous")
    }

    private static func explainOpenFailure(_ error: JobStoreError, path: String) -> JobStoreError {
        guard case .sqlite(let code, let message, _) = error else { return error }
        switch code & 0xff {
        case SQLITE_NOTADB:
            return .corrupt("\(path) is not a SQLite database (\(message))")
        case SQLITE_CORRUPT:
            return .corrupt("\(path) is damaged (\(message))")
        default:
            return error
        }
    }
}
