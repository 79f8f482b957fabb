/// A `Content-Range` value for a satisfied byte range: `bytes first-last/total` or `bytes first-last/*`.
public struct ContentRange: Equatable, Sendable, CustomStringConvertible {
    public var first: Int64
    public var last: Int64
    /// The complete length, nil when unknown (`*`).
    public var total: Int64?

    public init(first: Int64, last: Int64, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    /// Parses `bytes a-b/N` or `bytes a-b/*`; nil for anything else (including the unsatisfied form `bytes */N`),
    /// for `a > b`, and for `b >= N`.
    public static func parse(_ header: String) -> ContentRange? {
        let text = header.trimmingCharacters(inSet: [" ", "\t"])
        guard let space = text.firstIndex(of: " "), text[..<space].lowercased() == "bytes" else { return nil }
        let spec = String(text[text.index(after: space)...]).trimmingCharacters(inSet: [" ", "\t"])
        guard let slash = spec.firstIndex(of: "/"), let dash = spec[..<slash].firstIndex(of: "-") else { return nil }
        guard let first = number(spec[..<dash]), let last = number(spec[spec.index(after: dash)..<slash]), first <= last
        else { return nil }
        let totalText = spec[spec.index(after: slash)...]
        if totalText == "*" { return ContentRange(first: first, last: last, total: nil) }
        guard let total = number(totalText), last < total else { return nil }
        return ContentRange(first: first, last: last, total: total)
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }

    /// The value for a 416 answer: `bytes */total`.
    public static func unsatisfied(total: Int64) -> String { "bytes */\(total)" }

    public var headerValue: String { "bytes \(first)-\(last)/\(total.map(String.init) ?? "*")" }
    public var description: String { headerValue }
    public var length: Int64 { last - first + 1 }
}
