import Foundation

/// Which Ferry the terminal client talks to, and with which token.
///
/// Resolved once per command from `--server` / `--token` and their environment twins `FERRY_URL` /
/// `FERRY_TOKEN` (a flag wins over its variable; an empty value counts as absent). Pure value.
public struct ServerEndpoint: Sendable, Equatable {
    /// What `FERRY_URL` defaults to: a Ferry on this machine with `ferry serve`'s default port.
    public static let defaultURL = "http://127.0.0.1:8080"

    /// `scheme://host[:port][/prefix]`, never ending in "/".
    public let baseURL: String
    /// The bearer token, or nil for an open (loopback) Ferry.
    public let token: String?

    /// - Throws: `ClientError.usage` when the URL is not `http://` or `https://` with a host.
    public init(baseURL: String, token: String?) throws(ClientError) {
        var url = baseURL.trimmingCharacters(in: .whitespaces)
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw .usage("the server URL must start with http:// or https:// (got '\(baseURL)')")
        }
        while url.hasSuffix("/") { url.removeLast() }
        let authority = url.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first ?? ""
        guard !authority.isEmpty, url.contains("?") == false, url.contains("#") == false else {
            throw .usage("the server URL must be like http://host:port (got '\(baseURL)')")
        }
        self.baseURL = url
        self.token = token.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The endpoint for these flags and environment: flag, else variable, else the default URL.
    public static func resolve(server: String?, token: String?, environment: [String: String])
        throws(ClientError) -> ServerEndpoint
    {
        func pick(_ flag: String?, _ variable: String) -> String? {
            if let flag, !flag.isEmpty { return flag }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }
        return try ServerEndpoint(
            baseURL: pick(server, "FERRY_URL") ?? defaultURL, token: pick(token, "FERRY_TOKEN"))
    }

    /// The absolute URL of an API path such as `/api/v1/jobs` (which must start with "/").
    public func url(_ path: String) -> String { baseURL + path }
}
