/// SQL fragments every `PostgresJobStore` statement shares: how dates and tags travel. Pure text; the values
/// themselves are always parameters.
enum PostgresSQL {
    /// A `timestamptz` from parameter `$index`, whole milliseconds since 1970 (`StoredDate.milliseconds`), exactly.
    static func timestamp(_ index: Int) -> String {
        "('epoch'::timestamptz + $\(index)::bigint * interval '1 millisecond')"
    }

    /// An `interval` of parameter `$index` whole milliseconds (a lease).
    static func interval(_ index: Int) -> String {
        "($\(index)::bigint * interval '1 millisecond')"
    }

    /// Whole milliseconds since 1970 of a `timestamptz` column (NULL stays NULL).
    static func milliseconds(_ column: String) -> String {
        "(extract(epoch from \(column)) * 1000)::bigint"
    }

    /// `name` as a quoted identifier (`LISTEN "ferry_jobs"`), for the few statements that take no parameters.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `$first, $first+1, ...` for `count` parameters.
    static func placeholders(from first: Int, count: Int) -> [String] {
        (first..<(first + count)).map { "$\($0)" }
    }
}

/// One `pg_notify` a transaction sends: a channel and its payload. A pure value.
struct PostgresNotification: Sendable, Equatable {
    let channel: String
    let payload: String
}
