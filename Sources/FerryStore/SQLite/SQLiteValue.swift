import Foundation

/// A value for a named parameter of a statement run with `SQLiteConnection.run`, as `Statement.bind` binds it.
enum SQLiteValue {
    case text(String?)
    case integer(Int64?)
    case real(Double?)
    case blob([UInt8]?)

    static func int(_ value: Int?) -> SQLiteValue { .integer(value.map(Int64.init)) }
    /// A stored date: seconds since 1970, to the millisecond (`StoredDate`).
    static func date(_ date: Date) -> SQLiteValue { .real(StoredDate.seconds(date)) }
}

extension SQLiteConnection {
    /// Runs `sql`, a statement that returns no rows, with `parameters` bound by name (the cached prepared statement).
    func run(_ sql: String, _ parameters: KeyValuePairs<String, SQLiteValue>, operation: String) throws {
        try withStatement(sql, operation: operation) { statement in
            for (name, value) in parameters {
                switch value {
                case .text(let text): try statement.bind(text, to: name)
                case .integer(let integer): try statement.bind(integer, to: name)
                case .real(let real): try statement.bind(real, to: name)
                case .blob(let bytes): try statement.bind(bytes, to: name)
                }
            }
            try statement.step()
        }
    }
}
