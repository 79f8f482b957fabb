import CSQLite
import Dispatch

/// One open SQLite database handle and its cache of prepared statements.
///
/// Confined to the serial queue its owner passes in (for Ferry, `SQLiteJobStore`'s queue): every method checks
/// that it runs there. SQLite is opened in multi-thread mode (`SQLITE_OPEN_NOMUTEX`), which is safe exactly because
/// of that confinement. Every failure is a `JobStoreError.sqlite` carrying the extended result code, SQLite's
/// message and the operation that failed.
final class SQLiteConnection: DatabaseConnection, @unchecked Sendable {
    let path: String
    private let queue: DispatchQueue
    private var handle: OpaquePointer?
    /// Prepared statements by SQL text, reused across calls (reset after each use).
    private var statements: [String: Statement] = [:]

    /// Opens (creating if needed) the database at `path`.
    init(path: String, queue: DispatchQueue) throws {
        dispatchPrecondition(condition: .onQueue(queue))
        self.path = path
        self.queue = queue
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw JobStoreError.sqlite(code: rc, message: message, operation: "open \(path)")
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    deinit {
        // No other reference exists once deinit runs, so touching the handle off the queue is safe here.
        for statement in statements.values { statement.finalize() }
        if let handle { sqlite3_close_v2(handle) }
    }

    var isOpen: Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return handle != nil
    }

    /// Waits up to `milliseconds` for another connection's lock before failing with `SQLITE_BUSY`.
    func setBusyTimeout(milliseconds: Int32) throws {
        let rc = sqlite3_busy_timeout(try database(), milliseconds)
        guard rc == SQLITE_OK else { throw error(rc, operation: "busy_timeout") }
    }

    func executeScript(_ sql: String, operation: String) throws {
        let db = try database()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        guard rc == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_free(message)
            throw JobStoreError.sqlite(code: rc, message: text, operation: operation)
        }
    }

    /// Runs `body` with the cached prepared statement for `sql`, then resets it and clears its bindings.
    func withStatement<R>(_ sql: String, operation: String, _ body: (Statement) throws -> R) throws -> R {
        let statement = try prepared(sql, operation: operation)
        defer { statement.reset() }
        return try body(statement)
    }

    static let begin = "BEGIN IMMEDIATE"

    var inTransaction: Bool {
        guard let db = handle else { return false }
        return sqlite3_get_autocommit(db) == 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// Finalizes every statement and closes the handle; later calls fail with `SQLITE_MISUSE`.
    func close() {
        dispatchPrecondition(condition: .onQueue(queue))
        for statement in statements.values { statement.finalize() }
        statements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    private func database() throws -> OpaquePointer {
        dispatchPrecondition(condition: .onQueue(queue))
        guard let handle else {
            throw JobStoreError.sqlite(code: SQLITE_MISUSE, message: "the job store is closed", operation: "use \(path)")
        }
        return handle
    }

    private func prepared(_ sql: String, operation: String) throws -> Statement {
        let db = try database()
        if let cached = statements[sql] { return cached }
        var raw: OpaquePointer?
        let rc = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard rc == SQLITE_OK, let raw else {
            throw error(rc, operation: "\(operation): prepare")
        }
        let statement = Statement(handle: raw, operation: operation)
        statements[sql] = statement
        return statement
    }

    private func error(_ code: Int32, operation: String) -> JobStoreError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return .sqlite(code: code, message: message, operation: operation)
    }
}
