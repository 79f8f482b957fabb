/// Decides whether Ferry may connect to an address: the SSRF guard's rule book.
///
/// Used at submit time for literal hosts and by the engine on the address actually connected (every
/// redirect hop). Pure: no resolution happens here.
///
/// By default only `.public` addresses are allowed. `allowPrivateNetworks` opens every other class but
/// `.unspecified`; `allowedNetworks` (`--allow-network`) opens just the blocks named. `.unspecified` (0.0.0.0/8 and
/// `::`, also inside mapped forms) is never allowed: connecting to it silently reaches the local host on Linux,
/// which is never what a download URL means, and it is the classic way around naive loopback filters.
///
/// IPv6 forms that carry an IPv4 destination (IPv4-mapped `::ffff:0:0/96`, IPv4-compatible `::/96`,
/// NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are classified by the IPv4 address inside them, so
/// `::ffff:127.0.0.1` is `loopback`, never `public`.
public struct AddressPolicy: Sendable, Equatable {
    /// Allow every non-public class except `.unspecified` (`--allow-private-networks`).
    public var allowPrivateNetworks: Bool
    /// Non-public blocks allowed one by one (`--allow-network`).
    public var allowedNetworks: [IPNetwork]

    public init(allowPrivateNetworks: Bool = false, allowedNetworks: [IPNetwork] = []) {
        self.allowPrivateNetworks = allowPrivateNetworks
        self.allowedNetworks = allowedNetworks
    }

    /// Whether a connection to `address` is allowed.
    public func allows(_ address: IPAddress) -> Bool { refusal(of: address) == nil }

    /// Why a connection to `address` is refused, as a sentence for the job's error; nil when it is allowed.
    public func refusal(of address: IPAddress) -> String? {
        let addressClass = Self.classify(address)
        if addressClass == .public { return nil }
        if addressClass == .unspecified { return "\(address) is an unspecified address, which is never a destination" }
        if allowPrivateNetworks || allowedNetworks.contains(where: { $0.contains(address) }) { return nil }
        return "\(address) is a \(addressClass.rawValue) address and private networks are not allowed"
    }

    /// Why a host name may not be fetched before it is even resolved (`localhost` and `*.localhost` are loopback by
    /// definition, RFC 6761); nil when only the connected address can tell.
    public func refusal(ofName name: String) -> String? {
        guard name == "localhost" || name.hasSuffix(".localhost") else { return nil }
        let loopback = IPAddress("127.0.0.1")!
        guard refusal(of: loopback) != nil else { return nil }
        return "'\(name)' is a loopback name and private networks are not allowed"
    }

    /// What the policy opens beyond public addresses, for the start-up warning; nil when nothing is open.
    public var openedDescription: String? {
        if allowPrivateNetworks { return "all private networks (loopback, private, link-local, CGNAT, multicast, reserved)" }
        guard !allowedNetworks.isEmpty else { return nil }
        return allowedNetworks.map(\.description).joined(separator: ", ")
    }

    /// The special-purpose class `address` belongs to, or `.public`.
    public static func classify(_ address: IPAddress) -> AddressClass {
        address.isIPv4 ? classifyIPv4(address.bytes) : classifyIPv6(address.bytes)
    }

    private static func classifyIPv4(_ b: [UInt8]) -> AddressClass {
        switch (b[0], b[1], b[2]) {
        case (0, _, _): return .unspecified
        case (10, _, _): return .private
        case (100, 64...127, _): return .sharedCGNAT
        case (127, _, _): return .loopback
        case (169, 254, _): return .linkLocal
        case (172, 16...31, _): return .private
        case (192, 0, 0): return .reserved
        case (192, 0, 2): return .documentation
        case (192, 88, 99): return .reserved
        case (192, 168, _): return .private
        case (198, 18...19, _): return .benchmarking
        case (198, 51, 100): return .documentation
        case (203, 0, 113): return .documentation
        case (224...239, _, _): return .multicast
        case (255, 255, 255) where b[3] == 255: return .broadcast
        case (240...255, _, _): return .reserved
        default: return .public
        }
    }

    private static func classifyIPv6(_ b: [UInt8]) -> AddressClass {
        let address = IPAddress(bytes: b)!
        if b.allSatisfy({ $0 == 0 }) { return .unspecified }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return .loopback }
        if let v4 = address.embeddedIPv4 { return classifyIPv4(v4.bytes) }
        // 6to4: the IPv4 address in bytes 2-5 is the tunnel end point that receives the packets.
        if b[0] == 0x20 && b[1] == 0x02 { return classifyIPv4(Array(b[2..<6])) }
        // NAT64 local-use prefix (RFC 8215): translated inside one network only.
        if b.starts(with: [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01]) { return .private }
        if b[0] == 0 { return .reserved }                                        // rest of ::/8
        if b.starts(with: [0x01, 0x00, 0, 0, 0, 0, 0, 0]) { return .reserved }  // 100::/64 discard-only
        if b[0] == 0xff { return .multicast }                                    // ff00::/8
        if b[0] & 0xfe == 0xfc { return .uniqueLocal }                           // fc00::/7
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return .linkLocal }             // fe80::/10
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return .private }               // fec0::/10 site-local
        if b[0] & 0xe0 != 0x20 { return .reserved }                              // outside 2000::/3
        if b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8 { return .documentation } // 2001:db8::/32
        if b[0] == 0x20 && b[1] == 0x01 && b[2] & 0xfe == 0 { return .reserved } // 2001::/23
        if b[0] == 0x3f && b[1] == 0xff && b[2] & 0xf0 == 0 { return .documentation } // 3fff::/20
        return .public
    }
}
