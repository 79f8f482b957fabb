import Foundation

/// The proxy Ferry sends origins, deliveries and webhooks through (`--proxy` / `FERRY_PROXY`): an `http://`,
/// `https://` or `socks5h://` URL with a host, a port and optional credentials.
///
/// A pure value, checked once at start. `url` (with the credentials) is what libcurl gets; `redacted` (`***@`) is
/// what logs and messages show: the credentials never appear anywhere else.
public struct ProxySetting: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case http, https, socks5h
    }

    public let kind: Kind
    /// The host as written (a name, an IPv4 literal, or an IPv6 literal without brackets).
    public let host: String
    public let port: Int
    /// `user:password` as written in the URL (percent-encoded), or nil.
    let userinfo: String?

    /// Parses `text`. Only the scheme, userinfo, host and port are taken; a path other than `/` is refused, so a
    /// mistyped origin URL is not taken for a proxy.
    /// - Throws: `URLProblem.invalid` saying what is wrong, never echoing the credentials.
    public init(parsing text: String) throws(URLProblem) {
        let trimmed = text.trimmingASCIIWhitespace()
        guard let separator = trimmed.range(of: "://") else {
            throw .invalid("the proxy must be a URL such as http://host:3128, https://host:443 or socks5h://host:1080")
        }
        let scheme = trimmed[..<separator.lowerBound].lowercased()
        guard let kind = Kind(rawValue: scheme) else {
            throw .invalid("the proxy's scheme must be http, https or socks5h (socks5h: the proxy is given the address Ferry checked), not '\(scheme.prefix(16))'")
        }
        var rest = Substring(trimmed[separator.upperBound...])
        if let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            guard rest[slash...] == "/" else { throw .invalid("the proxy URL must not have a path or query") }
            rest = rest[..<slash]
        }
        var userinfo: String?
        if let at = rest.lastIndex(of: "@") {
            userinfo = String(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        let host: Substring, portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw .invalid("the proxy's IPv6 address lacks its closing ]") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.isEmpty { portText = nil } else {
                guard after.hasPrefix(":") else { throw .invalid("the proxy's port must follow its host after ':'") }
                portText = after.dropFirst()
            }
            guard IPAddress(String(host)) != nil else { throw .invalid("the proxy's IPv6 address is not valid") }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
            portText = nil
        }
        guard !host.isEmpty, host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:".contains($0)) }) else {
            throw .invalid("the proxy URL has no usable host")
        }
        guard let portText else {
            throw .invalid("the proxy URL must give its port (e.g. :3128 for an HTTP proxy, :1080 for SOCKS)")
        }
        guard let port = Int(portText), (1...65_535).contains(port) else {
            throw .invalid("the proxy's port must be a number from 1 to 65535")
        }
        self.kind = kind
        self.host = String(host)
        self.port = port
        self.userinfo = userinfo.flatMap { $0.isEmpty ? nil : $0 }
    }

    private var hostAndPort: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// The URL libcurl gets (`CURLOPT_PROXY`), credentials included. Never log it.
    public var url: String { "\(kind.rawValue)://" + (userinfo.map { $0 + "@" } ?? "") + hostAndPort }

    /// The URL to show: credentials as `***@`.
    public var redacted: String { "\(kind.rawValue)://" + (userinfo == nil ? "" : "***@") + hostAndPort }

    public var description: String { redacted }

    /// Whether requests through this proxy use an HTTP `CONNECT` tunnel (http and https proxies; for plain http
    /// origins too, so the proxy connects to the address Ferry checked instead of resolving the name itself).
    public var tunnels: Bool { kind != .socks5h }
}
