import Foundation

/// Byte counts, speeds, durations and percentages as people read them. Pure functions.
///
/// Sizes use binary units (KiB, MiB, …) with at most four digits: `999 B`, `1.0 KiB`, `15.2 MiB`, `152 MiB`.
public enum HumanUnits {
    private static let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

    /// `1536` → `"1.5 KiB"`; negative counts are shown as 0.
    public static func bytes(_ count: Int64) -> String {
        guard count >= 1000 else { return "\(max(0, count)) B" }
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return (value < 99.95 ? String(format: "%.1f", value) : String(format: "%.0f", value)) + " " + units[unit]
    }

    /// Bytes per second: `"1.2 MiB/s"`; nothing sensible (negative, NaN) is `"0 B/s"`.
    public static func speed(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "0 B/s" }
        return bytes(Int64(min(bytesPerSecond.rounded(), Double(Int64.max / 2)))) + "/s"
    }

    /// Time left: `"42s"`, `"4m05s"`, `"2h03m"`, `"3d04h"`; unknown (nil, negative, infinite) is `"--"`.
    public static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite, seconds >= 0 else { return "--" }
        let total = Int64(min(seconds.rounded(.up), 99 * 86_400))
        switch total {
        case ..<60: return "\(total)s"
        case ..<3600: return "\(total / 60)m" + twoDigits(total % 60) + "s"
        case ..<86_400: return "\(total / 3600)h" + twoDigits(total % 3600 / 60) + "m"
        default: return "\(total / 86_400)d" + twoDigits(total % 86_400 / 3600) + "h"
        }
    }

    /// `0.523` → `"52%"`. Rounded down, so 100% means done; unknown is `"--"`.
    public static func percent(_ fraction: Double?) -> String {
        guard let fraction, fraction.isFinite else { return "--" }
        let clamped = min(1, max(0, fraction))
        return "\(Int((clamped * 100).rounded(.down)))%"
    }

    private static func twoDigits(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
