/// An entity tag (RFC 9110 8.8.3): `"value"` or `W/"value"`.
public struct EntityTag: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The opaque tag without quotes.
    public var value: String
    public var isWeak: Bool

    public init(value: String, isWeak: Bool = false) {
        self.value = value
        self.isWeak = isWeak
    }

    /// One entity tag; nil when malformed (missing quotes, invalid characters, trailing garbage).
    public static func parse(_ text: String) -> EntityTag? {
        let trimmed = ASCII.trimmingWhitespace(Substring(text))
        var rest = trimmed[...]
        guard let tag = parseOne(&rest), rest.isEmpty else { return nil }
        return tag
    }

    /// The tags of an `If-Match` / `If-None-Match` list. Returns nil for `*` (matches any current representation);
    /// returns `[]` for a malformed list, so that it matches nothing.
    public static func parseList(_ header: String) -> [EntityTag]? {
        var rest = ASCII.trimmingWhitespace(Substring(header))
        if rest == "*" { return nil }
        var tags: [EntityTag] = []
        while true {
            while let c = rest.first, c == " " || c == "\t" || c == "," { rest = rest.dropFirst() }
            if rest.isEmpty { return tags }
            guard let tag = parseOne(&rest) else { return [] }
            tags.append(tag)
            while let c = rest.first, c == " " || c == "\t" { rest = rest.dropFirst() }
            guard rest.isEmpty || rest.first == "," else { return [] }
        }
    }

    /// True when `header` (If-None-Match / If-Match) is `*` or lists a tag matching `tag`
    /// (weak comparison for If-None-Match, strong for If-Match).
    public static func header(_ header: String, matches tag: EntityTag, weak: Bool) -> Bool {
        guard let list = parseList(header) else { return true }
        return list.contains { weak ? $0.weakMatch(tag) : $0.strongMatch(tag) }
    }

    private static func parseOne(_ rest: inout Substring) -> EntityTag? {
        var weak = false
        if rest.hasPrefix("W/") {
            weak = true
            rest = rest.dropFirst(2)
        }
        guard rest.first == "\"" else { return nil }
        rest = rest.dropFirst()
        guard let close = rest.firstIndex(of: "\"") else { return nil }
        let value = rest[..<close]
        for byte in value.utf8 where !(byte == 0x21 || (byte >= 0x23 && byte <= 0x7E) || byte >= 0x80) { return nil }
        rest = rest[rest.index(after: close)...]
        return EntityTag(value: String(value), isWeak: weak)
    }

    /// Strong comparison: both strong and identical.
    public func strongMatch(_ other: EntityTag) -> Bool { !isWeak && !other.isWeak && value == other.value }
    /// Weak comparison: identical opaque tags, weakness ignored.
    public func weakMatch(_ other: EntityTag) -> Bool { value == other.value }

    /// `"value"` or `W/"value"`.
    public var headerValue: String { (isWeak ? "W/\"" : "\"") + value + "\"" }
    public var description: String { headerValue }
}
