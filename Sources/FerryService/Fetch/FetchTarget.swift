import FerryCore
import Foundation

/// The origin URL a fetch-through request names: `/fetch/<scheme>/<host>[:<port>]/<path>[?<query>]` becomes
/// `<scheme>://<host>[:<port>]/<path>[?<query>]` (API.md, "Fetch-through").
///
/// Pure. Stricter than a submitted `url` where a prefix could be abused, then parsed by `SubmittedURL` (the one
/// parser of hosts, ports and IDN), so the host means to the guard what it means to libcurl:
/// - the scheme is `http` or `https` (any other is `unsupportedScheme`);
/// - the authority carries no userinfo (`@`), no `\` and no percent-encoding but of `:`, `[` and `]` (tools that
///   resolve relative links encode the port's colon);
/// - the path has no percent-encoded `/`, `\` or `.` (`%2F`, `%5C`, `%2E`), no `\`, and no `.` or `..` segment, so
///   what the origin is asked is what the request's path says.
enum FetchTarget {
    /// The path every fetch-through request starts with.
    static let prefix = "/fetch/"

    /// The origin URL of a request's raw (still percent-encoded) path and raw query.
    static func parse(rawPath: String, query: String?) throws(URLProblem) -> SubmittedURL {
        guard rawPath.hasPrefix(prefix) else { throw .invalid("a fetch-through path starts with \(prefix)") }
        let rest = rawPath.dropFirst(prefix.count)
        let parts = rest.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[0].isEmpty else {
            throw .invalid("a fetch-through path is /fetch/<scheme>/<host>[:<port>]/<path>")
        }
        let scheme = parts[0].lowercased()
        guard SubmittedURL.webSchemes.contains(scheme) else { throw .unsupportedScheme(scheme) }
        // Tools resolving relative links percent-encode the port's colon (pip: `127.0.0.1%3A8081`), and may the
        // brackets of an IPv6 address: those three, and nothing else, are decoded in the authority.
        let authority = decodingDelimiters(parts[1])
        guard !authority.isEmpty else { throw .invalid("the host is missing") }
        if authority.contains("@") { throw .invalid("credentials for the origin are not accepted in a fetch-through path") }
        if authority.contains("%") || authority.contains("\\") {
            throw .invalid("the host may not be percent-encoded or contain '\\'")
        }
        let path = "/" + (parts.count == 3 ? parts[2] : "")
        try checkPath(path)
        if let query, query.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalid("the query contains a control character")
        }
        let text = scheme + "://" + authority + path + (query.map { "?" + $0 } ?? "")
        let url = try SubmittedURL.parse(text, schemes: SubmittedURL.webSchemes)
        guard url.userinfo == nil else { throw .invalid("credentials for the origin are not accepted in a fetch-through path") }
        return url
    }

    /// `%3A`, `%5B` and `%5D` (either case) as `:`, `[` and `]`.
    private static func decodingDelimiters(_ authority: Substring) -> String {
        guard authority.contains("%") else { return String(authority) }
        var text = String(authority)
        for (encoded, plain) in [("%3A", ":"), ("%3a", ":"), ("%5B", "["), ("%5b", "["), ("%5D", "]"), ("%5d", "]")] {
            text = text.replacingOccurrences(of: encoded, with: plain)
        }
        return text
    }

    /// Refuses encoded separators and dots, backslashes and dot segments.
    private static func checkPath(_ path: String) throws(URLProblem) {
        if path.contains("\\") { throw .invalid("the path may not contain '\\'") }
        let lowered = path.lowercased()
        for encoded in ["%2f", "%5c", "%2e"] where lowered.contains(encoded) {
            throw .invalid("the path may not contain a percent-encoded '/', '\\' or '.' (\(encoded.uppercased()))")
        }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) where segment == "." || segment == ".." {
            throw .invalid("the path may not contain '.' or '..' segments")
        }
    }
}
