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
