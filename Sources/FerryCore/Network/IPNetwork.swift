/// A block of addresses in CIDR notation (`127.0.0.1/32`, `10.1.0.0/16`, `fd00::/8`): what `--allow-network` opens.
///
/// A bare address means that one address (`/32` or `/128`). The address part must be the block's first address
/// (`10.1.0.0/16`, not `10.1.2.3/16`), so a typo cannot open more than was written.
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    /// The first address of the block.
    public let address: IPAddress
    /// Leading bits that every address of the block shares with `address`.
    public let prefixLength: Int

    /// The block from its text; `nil` when the address or prefix length is invalid or host bits are set.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { return nil }
        let width = address.bytes.count * 8
        var length = width
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].allSatisfy(\.isASCIIDigit), parts[1].count <= 3, let n = Int(parts[1]),
                  n <= width else { return nil }
            length = n
        }
        guard Self.masked(address.bytes, prefixLength: length) == address.bytes else { return nil }
        self.address = address
        self.prefixLength = length
    }

    /// Whether `candidate` lies in the block. An IPv4 block also holds the IPv6 forms that carry one of its addresses
    /// (`::ffff:127.0.0.1` is in `127.0.0.0/8`), as `AddressPolicy` classifies them.
    public func contains(_ candidate: IPAddress) -> Bool {
        var bytes = candidate.bytes
        if bytes.count != address.bytes.count {
            guard address.isIPv4, let v4 = candidate.embeddedIPv4 else { return false }
            bytes = v4.bytes
        }
        return Self.masked(bytes, prefixLength: prefixLength) == address.bytes
    }

    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(8, max(0, prefixLength - index * 8))
            return bits == 8 ? byte : byte & ~(UInt8.max >> bits)
        }
    }
}
