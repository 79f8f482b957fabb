/// SQL fragments every `PostgresJobStore` statement shares: how dates and tags travel. Pure text; the values
/// themselves are always parameters.
enum PostgresSQL {
    /// A `timestamptz` from parameter `$index`, whole milliseconds since 1970 (`StoredDate.milliseconds`), exactly.
    static func timestamp(_ index: Int) -> String {
        "('epoch'::timestamptz + $\(index)::bigint * interval '1 millisecond')"
    }

    /// Whole milliseconds since 1970 of a `timestamptz` column (NULL stays NULL).
    static func milliseconds(_ column: String) -> String {
        "(extract(epoch from \(column)) * 1000)::bigint"
    }

    /// `$first, $first+1, ...` for `count` parameters.
    static func placeholders(from first: Int, count: Int) -> [String] {
        (first..<(first + count)).map { "$\($0)" }
    }
}
