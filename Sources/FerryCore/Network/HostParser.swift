import Foundation

/// The WHATWG host parser for special schemes (http, https), as used by ``SubmittedURL``.
enum HostParser {
    /// The longest host text (before percent-decoding) that is looked at.
    static let maxRawHostLength = 1024

    /// Parses the host part of an authority (brackets included for IPv6).
    static func parse(_ raw: ArraySlice<UInt8>) throws(URLProblem) -> SubmittedURL.Host {
        if raw.first == UInt8(ascii: "[") {
            guard raw.last == UInt8(ascii: "]"), raw.count >= 2,
                  let bytes = IPAddress.parseIPv6(Substring(decoding: raw.dropFirst().dropLast(), as: UTF8.self)),
                  let address = IPAddress(bytes: bytes) else {
                throw .invalid("the host is not a valid IPv6 address")
            }
            return .ipv6(address)
        }
        guard !raw.isEmpty else { throw .invalid("the URL has no host") }
        // Bound the work below (NFKC, Punycode) before doing it; DNS names are at most 253 bytes anyway.
        guard raw.count <= maxRawHostLength else { throw .invalid("the host name is too long for DNS") }
        guard let decoded = String(validating: PercentEncoding.decode(raw), as: UTF8.self) else {
            throw .invalid("the host is not valid UTF-8 after percent-decoding")
        }
        var ascii = try domainToASCII(decoded)
        let forbidden = Set(" #%/:<>?@[\\]^|".utf8)
        if ascii.utf8.contains(where: { $0 < 0x20 || $0 == 0x7f || forbidden.contains($0) }) {
            throw .invalid("the host contains a forbidden character")
        }
        if ascii.hasSuffix(".") { ascii.removeLast() }
        guard !ascii.isEmpty else { throw .invalid("the URL has no host") }
        let labels = ascii.split(separator: ".", omittingEmptySubsequences: false)
        if endsInNumber(labels) {
            guard let address = parseIPv4(labels) else { throw .invalid("the host looks like an IPv4 address but is not a valid one") }
            return .ipv4(address)
        }
        guard !labels.contains(where: \.isEmpty) else { throw .invalid("the host has an empty label") }
        guard labels.allSatisfy({ $0.utf8.count <= 63 }), ascii.utf8.count <= 253 else {
            throw .invalid("the host name is too long for DNS")
        }
        return .domain(ascii)
    }

    /// Lowercases ASCII names; maps international names (IDNA-like: NFKC, lowercase, full stop variants,
    /// then `xn--` Punycode per non-ASCII label).
    private static func domainToASCII(_ name: String) throws(URLProblem) -> String {
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return name.lowercased() }
        var mapped = name.precomposedStringWithCompatibilityMapping.lowercased()
        for stop in ["\u{3002}", "\u{FF0E}", "\u{FF61}"] { mapped = mapped.replacingOccurrences(of: stop, with: ".") }
        // Soft hyphen and zero-width joiners are mapped to nothing by UTS 46.
        mapped.unicodeScalars.removeAll(where: { [0xAD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF].contains($0.value) })
        var labels: [String] = []
        for label in mapped.split(separator: ".", omittingEmptySubsequences: false) {
            if label.utf8.allSatisfy({ $0 < 0x80 }) {
                labels.append(String(label))
            } else {
                guard !label.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.isWhitespace }),
                      let encoded = Punycode.encode(String(label)) else {
                    throw .invalid("the host contains characters that cannot be used in a domain name")
                }
                labels.append("xn--" + encoded)
            }
        }
        return labels.joined(separator: ".")
    }

    /// WHATWG "ends in a number": the last label (ignoring one empty trailing label) is all digits or `0x` hex.
    private static func endsInNumber(_ labels: [Substring]) -> Bool {
        var labels = labels
        if labels.last?.isEmpty == true {
            if labels.count == 1 { return false }
            labels.removeLast()
        }
        guard let last = labels.last, !last.isEmpty else { return false }
        if last.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) { return true }
        let lower = last.lowercased()
        return lower.hasPrefix("0x") && lower.dropFirst(2).utf8.allSatisfy { PercentEncoding.hexValue($0) != nil }
    }

    /// The WHATWG IPv4 parser: 1-4 parts, each decimal, `0x` hex or leading-zero octal; the last part fills
    /// the remaining bytes. `nil` on any failure.
    static func parseIPv4(_ labels: [Substring]) -> IPAddress? {
        var parts = labels
        if parts.last?.isEmpty == true, parts.count > 1 { parts.removeLast() }
        guard parts.count <= 4, !parts.isEmpty else { return nil }
        var numbers: [UInt64] = []
        for part in parts {
            guard let number = parseNumber(part) else { return nil }
            numbers.append(number)
        }
        for number in numbers.dropLast() where number > 255 { return nil }
        let last = numbers.last!
        guard last < UInt64(1) << (8 * UInt64(5 - numbers.count)) else { return nil }
        var value = last
        for (i, number) in numbers.dropLast().enumerated() { value += number << (8 * UInt64(3 - i)) }
        return IPAddress(bytes: [UInt8(value >> 24 & 0xff), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)])
    }

    /// One IPv4 part; values that do not fit in 32 bits fail (so they cannot wrap).
    private static func parseNumber(_ part: Substring) -> UInt64? {
        guard !part.isEmpty else { return nil }
        var digits = Substring(part)
        var radix: UInt64 = 10
        if digits.count >= 2, digits.hasPrefix("0x") || digits.hasPrefix("0X") {
            digits = digits.dropFirst(2)
            radix = 16
        } else if digits.count >= 2, digits.hasPrefix("0") {
            digits = digits.dropFirst()
            radix = 8
        }
        if digits.isEmpty { return 0 }
        var value: UInt64 = 0
        for byte in digits.utf8 {
            guard let digit = PercentEncoding.hexValue(byte), UInt64(digit) < radix else { return nil }
            value = value * radix + UInt64(digit)
            if value > UInt64(UInt32.max) { return nil }
        }
        return value
    }
}
