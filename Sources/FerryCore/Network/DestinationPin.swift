/// Where a request through a proxy must go: a URL's host and port, and the one address of it that Ferry resolved
/// and the destination guard allowed. The proxy is told to connect to that address (libcurl's `CURLOPT_CONNECT_TO`
/// entry, `connectTo`), so it never resolves the name itself; TLS still checks the URL's host name.
///
/// Pure: `choose` applies the `AddressPolicy` to the resolved addresses (the resolving is the engine's).
public struct DestinationPin: Sendable, Equatable, Hashable {
    /// The URL's host as libcurl matches it (`SubmittedURL.Host.serialized`: names lowercased, IPv6 in brackets).
    public let host: String
    public let port: Int
    public let address: IPAddress

    public init(host: String, port: Int, address: IPAddress) {
        self.host = host
        self.port = port
        self.address = address
    }

    /// `host:port`, what a pin is found by.
    public static func key(host: String, port: Int) -> String { "\(host):\(port)" }

    public var key: String { Self.key(host: host, port: port) }

    /// The `CURLOPT_CONNECT_TO` entry: `HOST:PORT:ADDRESS:PORT`.
    public var connectTo: String {
        let target = address.isIPv4 ? address.description : "[\(address.description)]"
        return "\(host):\(port):\(target):\(port)"
    }

    /// The first of `addresses` (in resolver order) that `policy` allows, or why none may be used: every refusal,
    /// or that the name resolved to nothing.
    public static func choose(
        host: String, port: Int, addresses: [IPAddress], policy: AddressPolicy
    ) -> Result<DestinationPin, PinRefusal> {
        guard !addresses.isEmpty else { return .failure(.unresolved("\(host) resolved to no address")) }
        var refusals: [String] = []
        for address in addresses {
            if let refusal = policy.refusal(of: address) {
                if !refusals.contains(refusal) { refusals.append(refusal) }
            } else {
                return .success(DestinationPin(host: host, port: port, address: address))
            }
        }
        return .failure(.forbidden("\(host): " + refusals.joined(separator: "; ")))
    }
}

/// Why a destination could not be pinned. The message names the host, never credentials.
public enum PinRefusal: Error, Equatable, Sendable {
    /// Every address the name resolved to is refused by the destination guard.
    case forbidden(String)
    /// The name did not resolve.
    case unresolved(String)
}
