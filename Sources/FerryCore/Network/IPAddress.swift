/// An IPv4 or IPv6 address as its bytes in network order (4 or 16 of them).
///
/// Parsing is strict, for addresses that come from resolvers, sockets and configuration:
/// IPv4 is a dotted quad of decimal numbers 0–255 without leading zeros (`"127.0.0.1"`, not `"127.1"` or
/// `"0177.0.0.1"`; the lenient WHATWG forms are handled by ``SubmittedURL``). IPv6 is RFC 4291 text with
/// at most one `::`, an optional trailing dotted quad (`"::ffff:1.2.3.4"`) and optional surrounding
/// brackets; zone identifiers (`%eth0`) are refused (code that has a `sockaddr` should use
/// ``init(bytes:)``).
///
/// ``description`` is canonical: dotted quad for IPv4, RFC 5952 for IPv6 (lowercase, longest run of two or
/// more zero groups compressed, the first one on a tie), with IPv4-mapped addresses written
/// `::ffff:1.2.3.4`.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, network order.
    public let bytes: [UInt8]

    /// An address from its bytes; `nil` unless there are exactly 4 or 16.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// An address from its text form, IPv4 dotted quad or IPv6 (with or without `[ ]`); `nil` when invalid.
    public init?(_ text: String) {
        var body = Substring(text)
        if body.hasPrefix("[") {
            guard body.hasSuffix("]"), body.count >= 2 else { return nil }
            body = body.dropFirst().dropLast()
            guard let v6 = IPAddress.parseIPv6(body) else { return nil }
            bytes = v6
        } else if let v4 = IPAddress.parseDottedQuad(body) {
            bytes = v4
        } else if let v6 = IPAddress.parseIPv6(body) {
            bytes = v6
        } else {
            return nil
        }
    }

    /// True for a 4-byte address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address carried inside an IPv6 one, when the IPv6 address is only a way of writing an IPv4
    /// destination: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (deprecated, but stacks still
    /// route it; `::` and `::1` are not counted as compatible addresses), and the NAT64 well-known prefix
    /// `64:ff9b::a.b.c.d`. `nil` for IPv4 addresses and every other IPv6 address. (6to4 `2002::/16` is
    /// handled by ``AddressPolicy`` directly, since those addresses are routed as IPv6.)
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let tail = Array(bytes[12..<16])
        let head = bytes[0..<12]
        if head.elementsEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]) { return IPAddress(bytes: tail) }
        if head.allSatisfy({ $0 == 0 }) {
            // ::/96 minus :: and ::1 (RFC 4291 2.5.5.1).
            if tail[0] == 0 && tail[1] == 0 && tail[2] == 0 && tail[3] <= 1 { return nil }
            return IPAddress(bytes: tail)
        }
        if head.elementsEqual([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]) { return IPAddress(bytes: tail) }
        return nil
    }

    /// Canonical text: dotted quad, or RFC 5952 IPv6 (without brackets).
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var groups = [Int](repeating: 0, count: 8)
        for g in 0..<8 { groups[g] = Int(bytes[2 * g]) << 8 | Int(bytes[2 * g + 1]) }
        // IPv4-mapped: RFC 5952 section 5 recommends the dotted tail.
        if groups[0..<5].allSatisfy({ $0 == 0 }) && groups[5] == 0xffff {
            return "::ffff:" + bytes[12..<16].map(String.init).joined(separator: ".")
        }
        // Longest run of at least two zero groups, first on a tie.
        var bestStart = -1, bestLength = 0, g = 0
        while g < 8 {
            if groups[g] == 0 {
                var end = g
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - g > bestLength { bestStart = g; bestLength = end - g }
                g = end
            } else {
                g += 1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        var text = ""
        g = 0
        while g < 8 {
            if g == bestStart {
                text += "::"
                g += bestLength
                continue
            }
            if !text.isEmpty && !text.hasSuffix(":") { text += ":" }
            text += String(groups[g], radix: 16)
            g += 1
        }
        return text
    }

    /// Strict dotted quad: four decimal parts 0-255, no leading zeros, nothing else.
    static func parseDottedQuad(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var result: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            if part.count > 1 && part.first == "0" { return nil }
            guard let value = UInt8(part) else { return nil }
            result.append(value)
        }
        return result
    }

    /// RFC 4291 section 2.2 text (as the WHATWG IPv6 parser reads it), without brackets or zone.
    static func parseIPv6(_ text: Substring) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard !chars.isEmpty else { return nil }
        var groups: [UInt16] = []
        var compressAt: Int? = nil
        var i = 0
        if chars.starts(with: [58, 58]) {
            compressAt = 0
            i = 2
            if i == chars.count { return [UInt8](repeating: 0, count: 16) }
        } else if chars[0] == 58 {
            return nil
        }
        while i < chars.count {
            guard groups.count < 8 else { return nil }
            // Try a trailing dotted quad when the rest contains a dot.
            let rest = chars[i...]
            let segmentEnd = rest.firstIndex(of: 58) ?? chars.count
            if chars[i..<segmentEnd].contains(46) {
                guard segmentEnd == chars.count else { return nil }
                guard groups.count <= 6, let v4 = parseDottedQuad(Substring(decoding: rest, as: UTF8.self)) else { return nil }
                groups.append(UInt16(v4[0]) << 8 | UInt16(v4[1]))
                groups.append(UInt16(v4[2]) << 8 | UInt16(v4[3]))
                i = chars.count
                break
            }
            var value: UInt16 = 0
            var digits = 0
            while i < chars.count, let hex = hexValue(chars[i]) {
                guard digits < 4 else { return nil }
                value = value << 4 | UInt16(hex)
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            groups.append(value)
            if i == chars.count { break }
            guard chars[i] == 58 else { return nil }
            i += 1
            if i < chars.count && chars[i] == 58 {
                guard compressAt == nil else { return nil }
                compressAt = groups.count
                i += 1
                if i == chars.count { break }
            } else if i == chars.count {
                return nil  // trailing single colon
            }
        }
        if let at = compressAt {
            guard groups.count < 8 else { return nil }
            groups.insert(contentsOf: [UInt16](repeating: 0, count: 8 - groups.count), at: at)
        }
        guard groups.count == 8 else { return nil }
        return groups.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 65...70: return c - 55
        case 97...102: return c - 87
        default: return nil
        }
    }
}
