import Testing
@testable import FerryCore

@Suite struct CivilDateTests {
    @Test func knownDays() {
        #expect(CivilDate(daysSinceEpoch: 0) == CivilDate(year: 1970, month: 1, day: 1))
        #expect(CivilDate(daysSinceEpoch: -1) == CivilDate(year: 1969, month: 12, day: 31))
        #expect(CivilDate(daysSinceEpoch: 11_016) == CivilDate(year: 2000, month: 2, day: 29))
        #expect(CivilDate(daysSinceEpoch: -719_162) == CivilDate(year: 1, month: 1, day: 1))
        #expect(CivilDate(year: 9999, month: 12, day: 31)?.daysSinceEpoch == 2_932_896)
    }

    @Test func roundTripsEveryDayAcrossCenturies() {
        var previous = CivilDate(daysSinceEpoch: -800_001)
        for days in -800_000...800_000 {
            let date = CivilDate(daysSinceEpoch: days)
            // Consecutive days: the next day of the month, or the 1st of the next month.
            let next = CivilDate(year: previous.year, month: previous.month, day: previous.day + 1)
                ?? CivilDate(year: previous.year + (previous.month == 12 ? 1 : 0), month: previous.month % 12 + 1, day: 1)
            guard date.daysSinceEpoch == days, date == next else {
                Issue.record("day \(days): \(date) (back to \(date.daysSinceEpoch)) after \(previous)")
                return
            }
            previous = date
        }
    }

    @Test func refusesDaysOutsideTheMonth() {
        #expect(CivilDate(year: 2024, month: 2, day: 29) != nil)
        #expect(CivilDate(year: 2000, month: 2, day: 29) != nil)
        #expect(CivilDate(year: 1900, month: 2, day: 29) == nil)
        #expect(CivilDate(year: 2026, month: 4, day: 31) == nil)
        #expect(CivilDate(year: 2026, month: 13, day: 1) == nil)
        #expect(CivilDate(year: 2026, month: 0, day: 1) == nil)
        #expect(CivilDate(year: 2026, month: 1, day: 0) == nil)
    }
}
