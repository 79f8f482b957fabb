import Foundation
import Testing
@testable import FerryCore

@Suite struct TimestampTests {
    @Test func formatsUTCWithMilliseconds() {
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 1_795_147_506.123)) == "2026-11-20T04:05:06.123Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 951_782_400)) == "2000-02-29T00:00:00.000Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 4_102_444_799.999)) == "2099-12-31T23:59:59.999Z")
    }

    @Test func truncatesBelowMilliseconds() {
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 10.9999)) == "1970-01-01T00:00:10.999Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 10.0004)) == "1970-01-01T00:00:10.000Z")
    }

    @Test func agreesWithFoundationOverManyDays() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var t = -2_000_000_000.0
        while t < 5_000_000_000 {
            let date = Date(timeIntervalSince1970: t)
            #expect(Timestamp.rfc3339(date) == formatter.string(from: date))
            t += 86_400 * 97.3 + 0.125
        }
    }

    @Test func roundTrips() {
        for ms in stride(from: Int64(-5_000_000_000_000), to: 5_000_000_000_000, by: 123_456_789_017) {
            let date = Date(timeIntervalSince1970: Double(ms) / 1000)
            let text = Timestamp.rfc3339(date)
            let parsed = Timestamp.parse(text)
            #expect(parsed.map(Timestamp.rfc3339) == text)
        }
    }

    @Test func parsesVariants() throws {
        let base = Date(timeIntervalSince1970: 1_795_147_506)
        #expect(Timestamp.parse("2026-11-20T04:05:06Z") == base)
        #expect(Timestamp.parse("2026-11-20t04:05:06z") == base)
        #expect(Timestamp.parse("2026-11-20 04:05:06Z") == base)
        #expect(Timestamp.parse("2026-11-20T06:05:06+02:00") == base)
        #expect(Timestamp.parse("2026-11-20T02:35:06-01:30") == base)
        let fraction = try #require(Timestamp.parse("2026-11-20T04:05:06.5Z"))
        #expect(abs(fraction.timeIntervalSince(base) - 0.5) < 1e-6)
        let long = try #require(Timestamp.parse("2026-11-20T04:05:06.123456789Z"))
        #expect(abs(long.timeIntervalSince(base) - 0.123456789) < 1e-6)
        #expect(Timestamp.parse("2016-12-31T23:59:60Z") == Timestamp.parse("2017-01-01T00:00:00Z"))
        #expect(Timestamp.parse("2024-02-29T00:00:00Z") != nil)
    }

    @Test(arguments: ["", "2026-11-19", "2026-11-19T22:05:06", "2026-11-19T22:05Z", "2026-13-01T00:00:00Z",
                      "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-19T24:00:00Z",
                      "2026-11-19T22:60:00Z", "2026-11-19T22:05:61Z", "2026-11-19T22:05:06.Z", "2026-11-19T22:05:06+0200",
                      "2026-11-19T22:05:06+24:00", "2026-11-19T22:05:06Z ", "26-11-19T22:05:06Z", "2026/11/19T22:05:06Z",
                      "2026-11-19T22:05:06ZZ", "２026-11-19T22:05:06Z", "2100-02-29T00:00:00Z"])
    func rejects(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }
}
