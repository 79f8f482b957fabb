import Foundation

/// HTTP dates (RFC 9110 5.6.7): formats IMF-fixdate; parses IMF-fixdate, RFC 850 and asctime forms. Whole seconds.
/// Calendar arithmetic is `CivilDate`'s.
public enum HTTPDate {
    static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longDayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// "Sun, 06 Nov 1994 08:49:37 GMT"
    public static func format(_ date: Date) -> String {
        format(secondsSince1970: Int(date.timeIntervalSince1970.rounded(.down)))
    }

    /// IMF-fixdate of a whole number of seconds since 1970.
    public static func format(secondsSince1970 seconds: Int) -> String {
        String(decoding: formatBytes(secondsSince1970: seconds), as: UTF8.self)
    }

    /// IMF-fixdate as bytes (29 of them), without Foundation formatters.
    public static func formatBytes(secondsSince1970 seconds: Int) -> [UInt8] {
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = seconds - days * 86400
        let civil = CivilDate(daysSinceEpoch: days)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday (4)
        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: dayNames[weekday].utf8)
        out.append(contentsOf: ", ".utf8)
        appendTwoDigits(civil.day, to: &out)
        out.append(UInt8(ascii: " "))
        out.append(contentsOf: monthNames[civil.month - 1].utf8)
        out.append(UInt8(ascii: " "))
        appendTwoDigits(civil.year / 100, to: &out)
        appendTwoDigits(civil.year % 100, to: &out)
        out.append(UInt8(ascii: " "))
        appendTwoDigits(secondOfDay / 3600, to: &out)
        out.append(UInt8(ascii: ":"))
        appendTwoDigits(secondOfDay / 60 % 60, to: &out)
        out.append(UInt8(ascii: ":"))
        appendTwoDigits(secondOfDay % 60, to: &out)
        out.append(contentsOf: " GMT".utf8)
        return out
    }

    private static func appendTwoDigits(_ value: Int, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
        out.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Parses any of the three forms; nil when malformed or out of range.
    public static func parse(_ text: String) -> Date? {
        guard let seconds = parseSeconds(text) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Like `parse`, as seconds since 1970.
    public static func parseSeconds(_ text: String) -> Int? {
        let s = text.trimmingCharacters(in: .whitespaces)
        let parts = s.split(separator: " ", omittingEmptySubsequences: true)
        if parts.count == 6, parts[0].hasSuffix(","), dayNames.contains(String(parts[0].dropLast())), parts[5] == "GMT" {
            // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
            guard parts[1].count == 2, parts[3].count == 4 else { return nil }
            return build(year: Int(parts[3]), month: month(parts[2]), day: Int(parts[1]), time: parts[4])
        }
        if parts.count == 4, parts[0].hasSuffix(","), longDayNames.contains(String(parts[0].dropLast())), parts[3] == "GMT" {
            // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
            let dmy = parts[1].split(separator: "-")
            guard dmy.count == 3, dmy[0].count == 2, dmy[2].count == 2, let yy = Int(dmy[2]) else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            let currentYear = CivilDate(daysSinceEpoch: Int(Date().timeIntervalSince1970) / 86400).year
            var year = 1900 + yy
            while year + 100 <= currentYear + 50 { year += 100 }
            return build(year: year, month: month(dmy[1]), day: Int(dmy[0]), time: parts[2])
        }
        if parts.count == 5, dayNames.contains(String(parts[0])) {
            // asctime: Sun Nov  6 08:49:37 1994
            guard parts[2].count <= 2, parts[4].count == 4 else { return nil }
            return build(year: Int(parts[4]), month: month(parts[1]), day: Int(parts[2]), time: parts[3])
        }
        return nil
    }

    private static func month(_ name: Substring) -> Int? {
        monthNames.firstIndex(of: String(name)).map { $0 + 1 }
    }

    private static func build(year: Int?, month: Int?, day: Int?, time: Substring) -> Int? {
        guard let year, let month, let day, year >= 1 else { return nil }
        let hms = time.split(separator: ":", omittingEmptySubsequences: false)
        guard hms.count == 3, hms.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
              let h = Int(hms[0]), let m = Int(hms[1]), let sec = Int(hms[2]),
              (0...23).contains(h), (0...59).contains(m), (0...60).contains(sec) else { return nil }
        guard let civil = CivilDate(year: year, month: month, day: day) else { return nil }  // e.g. 31 Feb
        return civil.daysSinceEpoch * 86400 + h * 3600 + m * 60 + sec
    }
}
