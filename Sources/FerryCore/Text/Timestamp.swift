import Foundation

/// Formats and parses RFC 3339 timestamps as the API shows them: UTC with millisecond precision,
/// `"2026-11-22T04:05:06.123Z"`.
///
/// Formatting always writes UTC, a `Z` and exactly three fraction digits; sub-millisecond parts are
/// truncated (never rounded up into the next second). Parsing accepts any RFC 3339 `date-time`: `T`/`t`
/// or a space between date and time, any number of fraction digits (or none), and `Z`/`z` or a
/// `±HH:MM` offset. A leap second (`:60`) is read as the first instant of the next minute. Calendar
/// arithmetic is `CivilDate`'s (proleptic Gregorian, by hand), so no `DateFormatter` or locale is involved
/// and both functions are safe from any thread.
public enum Timestamp {
    /// `date` as `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC.
    public static func rfc3339(_ date: Date) -> String {
        var bytes: [UInt8] = []
        appendRFC3339(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `rfc3339(date)`'s 24 ASCII bytes to `out` (no intermediate strings).
    public static func appendRFC3339(_ date: Date, to out: inout [UInt8]) {
        // Round to the microsecond first so that binary noise (x.123 stored as x.12299999) does not lose a millisecond.
        let microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let totalMilliseconds = (microseconds / 1000).rounded(.down)
        // Years 0001 to 9999: always four digits.
        let clamped = Int(max(min(totalMilliseconds, 253_402_300_799_999), -62_135_596_800_000))
        let (seconds, milliseconds) = floorDivide(clamped, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let civil = CivilDate(daysSinceEpoch: days)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        out.reserveCapacity(out.count + 24)
        digits(civil.year, 4); out.append(UInt8(ascii: "-")); digits(civil.month, 2); out.append(UInt8(ascii: "-")); digits(civil.day, 2)
        out.append(UInt8(ascii: "T"))
        digits(hour, 2); out.append(UInt8(ascii: ":")); digits(minute, 2); out.append(UInt8(ascii: ":")); digits(second, 2)
        out.append(UInt8(ascii: ".")); digits(milliseconds, 3); out.append(UInt8(ascii: "Z"))
    }

    /// The instant `text` names, or `nil` when it is not an RFC 3339 date-time.
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int? {
            guard i + count <= b.count else { return nil }
            var value = 0
            for k in i..<(i + count) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                value = value * 10 + Int(b[k] - 48)
            }
            i += count
            return value
        }
        func expect(_ allowed: [UInt8]) -> Bool {
            guard i < b.count, allowed.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect([45]), let month = number(2), expect([45]), let day = number(2),
              expect([84, 116, 32]), let hour = number(2), expect([58]), let minute = number(2), expect([58]),
              let second = number(2) else { return nil }
        guard let civil = CivilDate(year: year, month: month, day: day), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == 46 {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offset = 0
        if expect([90, 122]) {
            offset = 0
        } else if i < b.count, b[i] == 43 || b[i] == 45 {
            let sign = b[i] == 45 ? -1 : 1
            i += 1
            guard let offsetHours = number(2), expect([58]), let offsetMinutes = number(2),
                  offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let seconds = civil.daysSinceEpoch * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func floorDivide(_ a: Int, _ b: Int) -> (Int, Int) {
        let q = a >= 0 ? a / b : -((-a + b - 1) / b)
        return (q, a - q * b)
    }
}
