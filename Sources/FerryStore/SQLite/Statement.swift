import CSQLite

/// A prepared SQLite statement with named parameters (`:name`) and columns read by name.
///
/// Owned by a `SQLiteConnection` and confined to its queue; handed out only inside
/// `SQLiteConnection.withStatement`, which resets it afterwards.
final class Statement {
    private var handle: OpaquePointer?
    /// What the statement is for, used in error messages.
    let operation: String
    private let columns: [String: Int32]

    init(handle: OpaquePointer, operation: String) {
        self.handle = handle
        self.operation = operation
        var columns: [String: Int32] = [:]
        for index in 0..<sqlite3_column_count(handle) {
            columns[String(cString: sqlite3_column_name(handle, index))] = index
        }
        self.columns = columns
    }

    // MARK: Binding

    func bind(_ value: String?, to name: String) throws {
        let index = try parameter(name)
        guard let value else { return try check(sqlite3_bind_null(handle, index), "bind \(name)") }
        let rc = value.withCString { ferry_sqlite3_bind_text(handle, index, $0, Int32(value.utf8.count)) }
        try check(rc, "bind \(name)")
    }

    func bind(_ value: Int64?, to name: String) throws {
        let index = try parameter(name)
        guard let value else { return try check(sqlite3_bind_null(handle, index), "bind \(name)") }
        try check(sqlite3_bind_int64(handle, index, value), "bind \(name)")
    }

    func bind(_ value: Int?, to name: String) throws {
        try bind(value.map(Int64.init), to: name)
    }

    func bind(_ value: Double?, to name: String) throws {
        let index = try parameter(name)
        guard let value else { return try check(sqlite3_bind_null(handle, index), "bind \(name)") }
        try check(sqlite3_bind_double(handle, index, value), "bind \(name)")
    }

    func bind(_ value: [UInt8]?, to name: String) throws {
        let index = try parameter(name)
        guard let value else { return try check(sqlite3_bind_null(handle, index), "bind \(name)") }
        guard !value.isEmpty else { return try check(sqlite3_bind_zeroblob(handle, index, 0), "bind \(name)") }
        let rc = value.withUnsafeBytes { ferry_sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count)) }
        try check(rc, "bind \(name)")
    }

    // MARK: Stepping

    /// Steps through every row left, reading each with `read`.
    func rows<Row>(_ read: (Statement) throws -> Row) throws -> [Row] {
        var rows: [Row] = []
        while try step() { rows.append(try read(self)) }
        return rows
    }

    /// Advances to the next row: `true` when a row is available, `false` when the statement is done.
    @discardableResult
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(rc, "step")
        }
    }

    /// Ready to run again, with no parameter bound.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    // MARK: Columns of the current row

    func string(_ name: String) -> String? {
        string(at: column(name))
    }

    /// The text of the column at `index` (for results whose column names vary, such as PRAGMAs).
    func string(at index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let text = sqlite3_column_text(handle, index)
        else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func int64(_ name: String) -> Int64? {
        int64(at: column(name))
    }

    func int(_ name: String) -> Int? {
        int64(name).map { Int($0) }
    }

    func double(_ name: String) -> Double? {
        double(at: column(name))
    }

    func bytes(_ name: String) -> [UInt8]? {
        bytes(at: column(name))
    }

    // By position (0-based, in the order of the SELECT list): for rows read by the thousand.

    func int64(at index: Int32) -> Int64? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return sqlite3_column_int64(handle, index)
    }

    func double(at index: Int32) -> Double? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        return sqlite3_column_double(handle, index)
    }

    func bytes(at index: Int32) -> [UInt8]? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let pointer = sqlite3_column_blob(handle, index)
        let count = Int(sqlite3_column_bytes(handle, index))
        guard let pointer, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    // MARK: Private

    private func parameter(_ name: String) throws -> Int32 {
        let index = sqlite3_bind_parameter_index(handle, name)
        guard index > 0 else {
            throw JobStoreError.sqlite(code: SQLITE_RANGE, message: "no parameter \(name)", operation: operation)
        }
        return index
    }

    private func column(_ name: String) -> Int32 {
        guard let index = columns[name] else { preconditionFailure("\(operation): no column \(name) in result") }
        return index
    }

    private func check(_ rc: Int32, _ step: String) throws {
        guard rc != SQLITE_OK else { return }
        throw failure(rc, step)
    }

    private func failure(_ rc: Int32, _ step: String) -> JobStoreError {
        let message = sqlite3_db_handle(handle).map { String(cString: sqlite3_errmsg($0)) }
            ?? String(cString: sqlite3_errstr(rc))
        return .sqlite(code: rc, message: message, operation: "\(operation): \(step)")
    }
}
