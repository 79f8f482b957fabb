import Foundation

/// Formats and parses RFC 3339 timestamps as the API shows them: UTC with millisecond precision,
/// `"2026-11-22T04:05:06.123Z"`.
///
/// Formatting always writes UTC, a `Z` and exactly three fraction digits; sub-millisecond parts are
/// truncated (never rounded up into the next second). Parsing accepts any RFC 3339 `date-time`: `T`/`t`
/// or a space between date and time, any number of fraction digits (or none), and `Z`/`z` or a
/// `±HH:MM` offset. A leap second (`:60`) is read as the first instant of the next minute. Calendar
/// arithmetic is done by hand (proleptic Gregorian), so no `DateFormatter` or locale is involved and
/// both functions are safe from any thread.
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
        let clamped = Int64(max(min(totalMilliseconds, 253_402_300_799_999), -62_135_596_800_000))
        let (seconds, milliseconds) = floorDivide(clamped, 1000)
        let (days, secondOfDay) = floorDivide(seconds, 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        let hour = secondOfDay / 3600, minute = secondOfDay % 3600 / 60, second = secondOfDay % 60
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        out.reserveCapacity(out.count + 24)
        digits(year, 4); out.append(UInt8(ascii: "-")); digits(month, 2); out.append(UInt8(ascii: "-")); digits(day, 2)
        out.append(UInt8(ascii: "T"))
        digits(hour, 2); out.append(UInt8(ascii: ":")); digits(minute, 2); out.append(UInt8(ascii: ":")); digits(second, 2)
        out.append(UInt8(ascii: ".")); digits(milliseconds, 3); out.append(UInt8(ascii: "Z"))
    }

    /// The instant `text` names, or `nil` when it is not an RFC 3339 date-time.
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for k in i..<(i + count) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                value = value * 10 + Int64(b[k] - 48)
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
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 60 else { return nil }
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
        var offset: Int64 = 0
        if expect([90, 122]) {
            offset = 0
        } else if i < b.count, b[i] == 43 || b[i] == 45 {
            let sign: Int64 = b[i] == 45 ? -1 : 1
            i += 1
            guard let offsetHours = number(2), expect([58]), let offsetMinutes = number(2),
                  offsetHours <= 23, offsetMinutes <= 59 else { return nil }
            offset = sign * (offsetHours * 3600 + offsetMinutes * 60)
        } else {
            return nil
        }
        guard i == b.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a >= 0 ? a / b : -((-a + b - 1) / b)
        return (q, a - q * b)
    }

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given civil date (H. Hinnant's algorithm).
    static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day number counted from 1970-01-01 (H. Hinnant's algorithm).
    static func civilDate(daysSinceEpoch: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSinceEpoch + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
