/// The one rule that says when two URLs name the same download: job dedupe and fetch-through's cache key both use it
/// (API.md, "Fetch-through"). The URL as normalized, without the query parameters that sign or expire a link
/// (`SigningParameters`) nor those named with `--cache-key-ignore`.
///
/// Pure value, fixed at start-up.
public struct CacheKeyRule: Sendable, Equatable {
    /// The `--cache-key-ignore` names, lower-cased (query parameter names are compared without regard to case).
    public let ignored: Set<String>

    /// Only the signing parameters are left out.
    public static let standard = CacheKeyRule(ignoring: [])

    public init(ignoring names: [String]) {
        ignored = Set(names.map { $0.lowercased() })
    }

    /// The key of `url`.
    public func key(for url: SubmittedURL) -> String {
        url.dedupeKey(ignoring: ignored)
    }

    /// Whether `name` is a query parameter name `--cache-key-ignore` accepts: not empty, no `&`, `=`, `#`, spaces or
    /// control characters.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256
            && !name.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "&=#?".unicodeScalars.contains($0) }
    }
}
