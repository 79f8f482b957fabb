/// What kind of destination an IP address is, from the IANA IPv4 and IPv6 special-purpose address
/// registries (RFC 6890 and successors). Produced by ``AddressPolicy/classify(_:)``.
public enum AddressClass: String, Sendable {
    /// Globally routable unicast: the only class allowed when private networks are not.
    case `public`
    /// 127.0.0.0/8, ::1.
    case loopback
    /// RFC 1918 (10/8, 172.16/12, 192.168/16), IPv6 site-local fec0::/10, and NAT64 local-use 64:ff9b:1::/48.
    case `private`
    /// 169.254.0.0/16, fe80::/10.
    case linkLocal
    /// Carrier-grade NAT shared space 100.64.0.0/10 (RFC 6598).
    case sharedCGNAT
    /// 0.0.0.0/8 ("this network") and ::; connecting to them reaches the local host on most systems.
    case unspecified
    /// 224.0.0.0/4, ff00::/8.
    case multicast
    /// 255.255.255.255.
    case broadcast
    /// Reserved or not globally routable for other reasons: 240.0.0.0/4, 192.0.0.0/24, 192.88.99.0/24,
    /// 100::/64, 2001::/23, unassigned IPv6 space outside 2000::/3, and the rest of ::/8.
    case reserved
    /// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 3fff::/20.
    case documentation
    /// fc00::/7 (RFC 4193).
    case uniqueLocal
    /// 198.18.0.0/15 (RFC 2544).
    case benchmarking
    /// Never returned: IPv4-mapped (and compatible, NAT64, 6to4) addresses are classified by the IPv4
    /// address they carry. Kept so stored values and metrics labels stay stable.
    case ipv4Mapped
}
