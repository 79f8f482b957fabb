/// Parses byte sizes written by people on the command line and in environment variables.
///
/// Accepted forms: a non-negative number (integer or decimal) followed by an optional unit, with optional
/// spaces in between. Units are case-insensitive and may end in an optional `B`:
/// `K`/`KB` = 1000, `M` = 1000², `G` = 1000³, `T` = 1000⁴, `P` = 1000⁵ (powers of 1000, SI), and
/// `KiB`, `MiB`, `GiB`, `TiB`, `PiB` (powers of 1024). A bare number or `B` means bytes.
///
/// Fractions are allowed with a unit (`"1.5GiB"` = 1,610,612,736) and are rounded down to whole bytes.
/// Negative numbers, exponents, values that do not fit in `Int64` and unknown units give `nil`.
///
/// ```swift
/// ByteSize.parse("10K")    // 10_000
/// ByteSize.parse("10KiB")  // 10_240
/// ByteSize.parse("1.5gib") // 1_610_612_736
/// ```
public enum ByteSize {
    /// The number of bytes `text` stands for, or `nil` when it is not a size.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingASCIIWhitespace()
        guard let split = NumberWithUnit(trimmed) else { return nil }
        guard let multiplier = multiplier(for: split.unit) else { return nil }
        return split.scaled(by: multiplier)
    }

    private static func multiplier(for unit: String) -> Int64? {
        var unit = unit.lowercased()
        if unit.isEmpty || unit == "b" { return 1 }
        if unit.hasSuffix("b") { unit.removeLast() }
        let binary = unit.hasSuffix("i")
        if binary { unit.removeLast() }
        let exponent: Int
        switch unit {
        case "k": exponent = 1
        case "m": exponent = 2
        case "g": exponent = 3
        case "t": exponent = 4
        case "p": exponent = 5
        default: return nil
        }
        let base: Int64 = binary ? 1024 : 1000
        var result: Int64 = 1
        for _ in 0..<exponent { result *= base }
        return result
    }
}

/// A decimal number followed by a unit word, as in `"1.5GiB"` or `"30 s"`; shared by the size and duration parsers.
struct NumberWithUnit {
    /// Digits before the decimal point (at least one digit in total across both parts).
    var integerDigits: Substring
    /// Digits after the decimal point, possibly empty.
    var fractionDigits: Substring
    /// The unit, spaces removed; may be empty.
    var unit: String

    init?(_ text: Substring) {
        var index = text.startIndex
        while index < text.endIndex, text[index].isASCIIDigit { index = text.index(after: index) }
        integerDigits = text[text.startIndex..<index]
        var fractionStart = index
        if index < text.endIndex, text[index] == "." {
            index = text.index(after: index)
            fractionStart = index
            while index < text.endIndex, text[index].isASCIIDigit { index = text.index(after: index) }
        }
        fractionDigits = text[fractionStart..<index]
        guard !(integerDigits.isEmpty && fractionDigits.isEmpty) else { return nil }
        let rest = text[index...].drop(while: { $0 == " " })
        guard rest.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        unit = String(rest)
    }

    init?(_ text: String) { self.init(Substring(text)) }

    /// The value as a `Double` (for durations).
    var doubleValue: Double? {
        Double((integerDigits.isEmpty ? "0" : String(integerDigits)) + "." + (fractionDigits.isEmpty ? "0" : String(fractionDigits)))
    }

    /// The value times `multiplier`, rounded down, or `nil` on overflow.
    func scaled(by multiplier: Int64) -> Int64? {
        var whole: Int64 = 0
        for digit in integerDigits {
            let (times10, o1) = whole.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(digit.asciiValue! - 48))
            if o1 || o2 { return nil }
            whole = sum
        }
        let (scaledWhole, overflow) = whole.multipliedReportingOverflow(by: multiplier)
        if overflow { return nil }
        guard fractionDigits.contains(where: { $0 != "0" }) else { return scaledWhole }
        // floor(0.d1d2...dn * multiplier), exact: numerator < denominator, so the quotient < multiplier.
        var numerator: Int64 = 0
        var denominator: Int64 = 1
        for digit in fractionDigits.prefix(18) {
            numerator = numerator * 10 + Int64(digit.asciiValue! - 48)
            denominator *= 10
        }
        let fraction = denominator.dividingFullWidth(numerator.multipliedFullWidth(by: multiplier)).quotient
        let (total, o3) = scaledWhole.addingReportingOverflow(fraction)
        return o3 ? nil : total
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}

extension StringProtocol {
    /// The text without leading and trailing ASCII spaces, tabs, CR and LF.
    func trimmingASCIIWhitespace() -> Substring {
        let whole = self[...]
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = whole.firstIndex(where: { !isSpace($0) }), let last = whole.lastIndex(where: { !isSpace($0) }) else {
            return Substring()
        }
        return Substring(whole[first...last])
    }
}
