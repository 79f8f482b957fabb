/// Parses durations written by people (`--retention 7d`) into seconds.
///
/// Accepted forms: a non-negative decimal number followed by an optional unit, case-insensitive:
/// `ms` (milliseconds), `s`, `m` (minutes), `h`, `d`; a bare number means seconds. Several components may
/// be combined, largest first or not (`"1h30m"` = 5400), each with its own unit. Negative values,
/// exponents and unknown units give `nil`.
///
/// ```swift
/// DurationText.parse("30s")  // 30
/// DurationText.parse("1.5h") // 5400
/// DurationText.parse("7d")   // 604800
/// ```
public enum DurationText {
    /// The number of seconds `text` stands for, or `nil` when it is not a duration.
    public static func parse(_ text: String) -> Double? {
        var rest = text.trimmingASCIIWhitespace()
        guard !rest.isEmpty else { return nil }
        var total = 0.0
        var components = 0
        while !rest.isEmpty {
            // One component: digits[.digits] then letters.
            var end = rest.startIndex
            while end < rest.endIndex, rest[end].isASCIIDigit || rest[end] == "." { end = rest.index(after: end) }
            while end < rest.endIndex, rest[end] == " " { end = rest.index(after: end) }
            while end < rest.endIndex, rest[end].isASCII, rest[end].isLetter { end = rest.index(after: end) }
            guard end > rest.startIndex, let component = NumberWithUnit(rest[rest.startIndex..<end]),
                  let value = component.doubleValue, let unit = seconds(per: component.unit) else { return nil }
            // A unitless number is only allowed on its own ("90"), not inside "1h30".
            if component.unit.isEmpty && (components > 0 || end < rest.endIndex) { return nil }
            total += value * unit
            components += 1
            rest = rest[end...].drop(while: { $0 == " " })
        }
        return total.isFinite ? total : nil
    }

    private static func seconds(per unit: String) -> Double? {
        switch unit.lowercased() {
        case "", "s": return 1
        case "ms": return 0.001
        case "m": return 60
        case "h": return 3600
        case "d": return 86_400
        default: return nil
        }
    }
}
