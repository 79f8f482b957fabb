/// One value sent with a parameterized statement (`$1`, `$2`, ...): text (numbers too, in their decimal form, which
/// the server parses for the column's type), raw bytes for `bytea` (sent in binary format), or SQL NULL.
/// Values never become part of the SQL text. A pure value.
enum PostgresParameter: Sendable, Equatable {
    case text(String)
    case bytes([UInt8])
    case null

    init(_ value: String?) {
        self = value.map(Self.text) ?? .null
    }

    init(_ value: Int64?) {
        self = value.map { .text(String($0)) } ?? .null
    }

    init(_ value: Int?) {
        self = value.map { .text(String($0)) } ?? .null
    }

    /// A `text[]` literal (`{"a","b"}`), every element quoted, so any text (commas, quotes, `NULL`) stays an element.
    static func textArray(_ elements: [String]) -> PostgresParameter {
        let quoted = elements.map { element in
            "\"" + element.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return .text("{" + quoted.joined(separator: ",") + "}")
    }

    /// A `bigint[]` literal (`{1,2}`).
    static func integerArray(_ elements: [Int64]) -> PostgresParameter {
        .text("{" + elements.map { String($0) }.joined(separator: ",") + "}")
    }
}
