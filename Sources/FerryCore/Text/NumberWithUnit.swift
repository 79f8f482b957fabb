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
