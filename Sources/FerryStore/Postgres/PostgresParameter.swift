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
    /// Written byte by byte (a commit sends its events' data this way): backslashes and double quotes are escaped.
    static func textArray(_ elements: [String]) -> PostgresParameter {
        textArray(elements.map(Optional.some))
    }

    /// A `text[]` literal whose `nil` elements are SQL NULL (an unquoted `NULL`); the others as in `textArray(_:)`.
    static func textArray(_ elements: [String?]) -> PostgresParameter {
        let (quote, backslash) = (UInt8(ascii: "\""), UInt8(ascii: "\\"))
        var literal: [UInt8] = [UInt8(ascii: "{")]
        literal.reserveCapacity(elements.reduce(2) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, element) in elements.enumerated() {
            if index > 0 { literal.append(UInt8(ascii: ",")) }
            guard let element else {
                literal.append(contentsOf: "NULL".utf8)
                continue
            }
            literal.append(quote)
            for byte in element.utf8 {
                if byte == quote || byte == backslash { literal.append(backslash) }
                literal.append(byte)
            }
            literal.append(quote)
        }
        literal.append(UInt8(ascii: "}"))
        return .text(String(decoding: literal, as: UTF8.self))
    }

    /// A `bigint[]` literal (`{1,2}`).
    static func integerArray(_ elements: [Int64]) -> PostgresParameter {
        .text("{" + elements.map { String($0) }.joined(separator: ",") + "}")
    }
}
