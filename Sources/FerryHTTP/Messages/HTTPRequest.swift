/// A complete request as handed to a handler: head, whole body (bounded by the server's maxBodySize), peer address.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The raw request-target as received.
    public var target: String
    /// The percent-decoded path, for display and simple matching. Route with `rawPath` segments when `%2F` matters.
    public var path: String
    /// The path as received (still percent-encoded), without the query.
    public var rawPath: String
    /// The raw query (after `?`), nil when there is none.
    public var query: String?
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// "host:port" of the peer ("[v6]:port" for IPv6).
    public var remoteAddress: String
    /// Values of `:name` and `*name` pattern segments, filled by the router.
    public var pathParameters: [String: String] = [:]
    /// The pattern of the route that matched, e.g. "/api/v1/jobs/:id", filled by the router.
    public var routePattern: String?

    public init(method: HTTPMethod = .GET, target: String, version: HTTPVersion = .http1_1,
                headers: HTTPHeaders = [:], body: [UInt8] = [], remoteAddress: String = "") {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        let split = HTTPRequest.splitTarget(target)
        self.rawPath = split.path
        self.query = split.query
        self.path = PercentDecoding.decode(split.path)
    }

    /// `name=value` pairs of the query, percent-decoded with `+` as space, in order.
    public func queryItems() -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let eq = item.firstIndex(of: "=") {
                return (name: PercentDecoding.decode(item[..<eq], plusAsSpace: true),
                        value: PercentDecoding.decode(item[item.index(after: eq)...], plusAsSpace: true))
            }
            return (name: PercentDecoding.decode(item, plusAsSpace: true), value: "")
        }
    }

    /// The first value of the query parameter `name`.
    public func queryValue(_ name: String) -> String? {
        queryItems().first { $0.name == name }?.value
    }

    /// Path and query of an origin-form or absolute-form target (the fragment, if any, dropped).
    static func splitTarget(_ target: String) -> (path: String, query: String?) {
        // Common case, an origin-form path with no query or fragment: the path is the target (no copy).
        if target.utf8.first == UInt8(ascii: "/"),
           !target.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            return (path: target, query: nil)
        }
        var rest = Substring(target)
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        if !rest.hasPrefix("/") && rest != "*" {
            // absolute-form: scheme://authority/path?query
            if let schemeEnd = rest.range(of: "://") {
                let afterAuthority = rest[schemeEnd.upperBound...]
                if let slash = afterAuthority.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                    rest = afterAuthority[slash...]
                    if rest.hasPrefix("?") { return (path: "/", query: String(rest.dropFirst())) }
                } else {
                    return (path: "/", query: nil)
                }
            }
        }
        if let question = rest.firstIndex(of: "?") {
            return (path: String(rest[..<question]), query: String(rest[rest.index(after: question)...]))
        }
        return (path: String(rest), query: nil)
    }
}
