/// A URL submitted by a user, parsed the way browsers parse it (WHATWG URL standard) for everything that
/// decides where a connection goes, and kept byte-exact where it only matters to the origin.
///
/// What parsing does:
/// - At most ``maxLength`` bytes (64 KiB).
/// - Leading and trailing spaces and C0 controls are trimmed (pasted URLs); any other control character
///   (including tab and newline, which WHATWG would silently drop) makes the URL invalid, so nothing can
///   smuggle a header line through.
/// - Only the schemes the caller accepts (case-insensitive): `http` and `https` (``webSchemes``), and for a
///   job's source also `ftp`, `ftps` and `sftp` (``downloadSchemes``); every other scheme, including `file:`,
///   `gopher:`, `dict:`, `data:` and `javascript:`, is ``URLProblem/unsupportedScheme(_:)``. Every accepted
///   scheme's authority is parsed by the rules WHATWG has for special schemes, so a host means the same address
///   to Ferry's guard as to libcurl's resolver (`ftps` and `sftp` are not special to WHATWG, which would keep
///   `127.1` as an opaque name).
/// - As WHATWG does for special schemes, any run of `/` or `\` may follow the scheme, and `\` counts as
///   `/` in the authority and the path.
/// - The host is parsed as WHATWG does: percent-decoded, lowercased, internationalised names mapped
///   (NFKC, then Punycode per label), forbidden code points refused, a host ending in a numeric label is
///   read as IPv4 with the lenient rules (`127.1`, `2130706433`, `0x7f000001`, `0177.0.0.1`, `0x7f.1` all
///   mean 127.0.0.1), and `[…]` is IPv6. A trailing dot is removed. Empty labels, labels longer than 63
///   bytes and names longer than 253 bytes are refused (no resolver would answer them).
/// - The port must be 0–65535; the scheme's default port is dropped.
/// - Userinfo (`user:pass@`) is kept, because origins may need HTTP basic authentication (and FTP and SFTP
///   servers a login); it appears in
///   ``normalized`` (handed to libcurl) but never in ``redacted`` (which writes it `***@`), which is what the
///   API, events, logs and error messages must use.
/// - The path and query are kept byte for byte, except that spaces and non-ASCII characters are
///   percent-encoded (libcurl refuses them) and `\` in the path becomes `/`. Dot segments are left to
///   libcurl. The fragment is dropped: it is never sent to the origin.
public struct SubmittedURL: Sendable, Equatable {
    /// Where the connection goes.
    public enum Host: Sendable, Equatable {
        /// A literal IPv4 address (in any WHATWG form).
        case ipv4(IPAddress)
        /// A literal IPv6 address (written in brackets).
        case ipv6(IPAddress)
        /// A DNS name: lowercased, ASCII (Punycode for international names), trailing dot removed.
        case domain(String)

        /// The host as it appears in a URL: dotted quad, `[v6]` (RFC 5952), or the name.
        public var serialized: String {
            switch self {
            case .ipv4(let address): return address.description
            case .ipv6(let address): return "[" + address.description + "]"
            case .domain(let name): return name
            }
        }

        /// The literal address, `nil` for a domain.
        public var address: IPAddress? {
            switch self {
            case .ipv4(let address), .ipv6(let address): return address
            case .domain: return nil
            }
        }
    }

    /// `"http"`, `"https"`, `"ftp"`, `"ftps"` or `"sftp"`, lowercased.
    public let scheme: String
    /// The destination host.
    public let host: Host
    /// The explicit port, `nil` when absent or equal to the scheme's default.
    public let port: Int?
    /// The path (starting with `/`) and the query (with its `?`), without the fragment.
    public let pathAndQuery: String
    /// `user[:password]`, percent-encoded, or `nil`. Secret: never log it.
    public let userinfo: String?

    /// `scheme://[userinfo@]host[:port]pathAndQuery`: what is handed to libcurl. Contains credentials when
    /// the user gave some; use ``redacted`` for logs.
    public var normalized: String { serialize(withUserinfo: true) }

    /// ``normalized`` with the userinfo written `***`: safe to log and to show.
    public var redacted: String { serialize(withUserinfo: false) }

    /// `text` (a URL another party wrote, such as libcurl's final URL after redirects) with any userinfo of its
    /// authority written `***`, as ``redacted`` does; other text is returned as it is.
    /// Runs for every job rendered, so it scans bytes and copies nothing when there is no userinfo.
    public static func redacting(_ text: String) -> String {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return text }
        var index = bytes.index(after: colon)
        for _ in 0..<2 {
            guard index != bytes.endIndex, bytes[index] == UInt8(ascii: "/") else { return text }
            index = bytes.index(after: index)
        }
        let authorityStart = index
        var at: String.Index?
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            if byte == UInt8(ascii: "@") { at = index }
            index = bytes.index(after: index)
        }
        guard let at else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }

    /// The key under which identical downloads are found: ``normalized`` (scheme and host already
    /// canonical, default port dropped) without the query parameters that sign or expire a link
    /// (`SigningParameters`).
    public var dedupeKey: String { dedupeKey(ignoring: []) }

    /// ``dedupeKey`` without the query parameters named in `extra` either (lower-cased; `CacheKeyRule`).
    public func dedupeKey(ignoring extra: Set<String>) -> String {
        let text = normalized
        let query = SigningParameters.removed(from: pathAndQuery, also: extra)
        guard query != pathAndQuery, text.hasSuffix(pathAndQuery) else { return text }
        return String(text.dropLast(pathAndQuery.count)) + query
    }

    /// The port a connection uses: the explicit one or the scheme's default.
    public var effectivePort: Int { port ?? Self.defaultPort(of: scheme) }

    /// Schemes of webhooks and delivery targets (and the default of ``parse(_:schemes:)``).
    public static let webSchemes: Set<String> = ["http", "https"]
    /// Schemes a job may download from: the web's, FTP (`ftps`: TLS required, negotiated with `AUTH TLS` on the
    /// FTP port) and SFTP.
    public static let downloadSchemes: Set<String> = webSchemes.union(["ftp", "ftps", "sftp"])

    /// The port a scheme connects to when the URL names none (`ftps` is explicit FTPS, on FTP's port).
    public static func defaultPort(of scheme: String) -> Int {
        switch scheme {
        case "https": return 443
        case "ftp", "ftps": return 21
        case "sftp": return 22
        default: return 80
        }
    }

    init(scheme: String, host: Host, port: Int?, pathAndQuery: String, userinfo: String?) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
        self.userinfo = userinfo
    }

    private func serialize(withUserinfo: Bool) -> String {
        var text = scheme + "://"
        if let userinfo { text += (withUserinfo ? userinfo : "***") + "@" }
        text += host.serialized
        if let port { text += ":" + String(port) }
        return text + pathAndQuery
    }
}
