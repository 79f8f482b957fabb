/// Which user-supplied request headers reach the origin.
///
/// Pure. Headers that would change how the request is framed or routed, or that the engine sets itself, are
/// dropped: Host, Range, If-Range, Content-Length, Transfer-Encoding, Connection, Keep-Alive, TE, Trailer,
/// Upgrade, Expect and any Proxy-*. The service refuses them at submit; this is the engine's own guard.
enum RequestHeaderFilter {
    static let refusedNames: Set<String> = [
        "host", "range", "if-range", "content-length", "transfer-encoding", "connection", "keep-alive", "te",
        "trailer", "upgrade", "expect",
    ]

    static func isAllowed(name: String) -> Bool {
        let lower = name.lowercased()
        guard !lower.isEmpty, !refusedNames.contains(lower), !lower.hasPrefix("proxy-") else { return false }
        // A token: no separators, no whitespace or control characters (header injection).
        return lower.utf8.allSatisfy { $0 > 32 && $0 < 127 && !"()<>@,;:\\\"/[]?={}".utf8.contains($0) }
    }

    static func isAllowed(value: String) -> Bool {
        !value.unicodeScalars.contains { $0 == "\r" || $0 == "\n" || $0 == "\0" }
    }

    /// "Name: value" lines for libcurl, in order, without the refused ones.
    static func lines(_ headers: [(name: String, value: String)]) -> [String] {
        headers.filter { isAllowed(name: $0.name) && isAllowed(value: $0.value) }.map { "\($0.name): \($0.value)" }
    }
}
