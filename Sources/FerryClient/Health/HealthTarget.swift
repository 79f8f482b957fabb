import Foundation

/// Where `ferry health` asks: the `/healthz` of a service that `ferry serve` runs on `host`:`port`. Pure value.
///
/// A wildcard listening address accepts connections on every local address, so the probe asks the loopback
/// address of the same family: the empty host, `0.0.0.0` (or any spelling of it) → `127.0.0.1`, `::` →
/// `::1`. Any other host is asked as it is; IPv6 literals are written in brackets.
public struct HealthTarget: Sendable, Equatable {
    /// The host to connect to, without brackets: `127.0.0.1`, `::1`, `ferry.lan`.
    public let host: String
    public let port: Int

    /// - Parameters:
    ///   - listeningHost: the service's `--host` / `FERRY_HOST`, brackets allowed (`[::]`).
    ///   - port: the service's `--port` / `FERRY_PORT`.
    /// - Throws: `.usage` for port 0 (the service takes any free port, which cannot be known from outside) or a
    ///   port beyond 65535.
    public init(listeningHost: String, port: Int) throws(ClientError) {
        guard port != 0 else {
            throw .usage("the port is 0 (any free port), so there is nothing to ask: give the service's --port or FERRY_PORT")
        }
        guard (1...65535).contains(port) else { throw .usage("the port must be from 1 to 65535 (got \(port))") }
        var host = listeningHost.trimmingCharacters(in: .whitespaces)
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = Self.wildcardReplacement(host) ?? host
        self.port = port
    }

    /// `http://127.0.0.1:8080`, `http://[::1]:8080`.
    public var baseURL: String { "http://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// The liveness endpoint's URL.
    public var url: String { baseURL + Self.path }

    /// `GET /healthz` (API.md): `200 {"status":"ok"}` while the process serves.
    public static let path = "/healthz"

    /// The loopback address to ask instead of a wildcard address, or nil when `host` is not one.
    static func wildcardReplacement(_ host: String) -> String? {
        if host.isEmpty { return "127.0.0.1" }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return v4.s_addr == 0 ? "127.0.0.1" : nil }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let allZero = withUnsafeBytes(of: &v6) { $0.allSatisfy { $0 == 0 } }
            return allZero ? "::1" : nil
        }
        return nil
    }
}
