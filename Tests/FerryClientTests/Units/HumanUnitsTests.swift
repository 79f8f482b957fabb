@testable import FerryClient
import Testing

@Suite("Human units")
struct HumanUnitsTests {
    @Test(arguments: [
        (Int64(0), "0 B"), (999, "999 B"), (1000, "1.0 KiB"), (1024, "1.0 KiB"), (1536, "1.5 KiB"),
        (102_400, "100 KiB"), (1_048_576, "1.0 MiB"), (5_000_000, "4.8 MiB"), (15_938_355, "15.2 MiB"),
        (1_073_741_824, "1.0 GiB"), (-5, "0 B"), (Int64.max, "8.0 EiB"),
    ])
    func bytes(_ count: Int64, _ text: String) {
        #expect(HumanUnits.bytes(count) == text)
    }

    @Test func speeds() {
        #expect(HumanUnits.speed(0) == "0 B/s")
        #expect(HumanUnits.speed(-3) == "0 B/s")
        #expect(HumanUnits.speed(.nan) == "0 B/s")
        #expect(HumanUnits.speed(.infinity) == "0 B/s")
        #expect(HumanUnits.speed(2_097_152) == "2.0 MiB/s")
        #expect(HumanUnits.speed(512.4) == "512 B/s")
    }

    @Test(arguments: [
        (0.0, "0s"), (0.2, "1s"), (42, "42s"), (59.5, "1m00s"), (65, "1m05s"), (3599, "59m59s"), (3600, "1h00m"),
        (7380, "2h03m"), (86_400, "1d00h"), (273_600, "3d04h"), (1e12, "99d00h"),
    ])
    func durations(_ seconds: Double, _ text: String) {
        #expect(HumanUnits.duration(seconds) == text)
    }

    @Test func unknownDurations() {
        #expect(HumanUnits.duration(nil) == "--")
        #expect(HumanUnits.duration(-1) == "--")
        #expect(HumanUnits.duration(.infinity) == "--")
        #expect(HumanUnits.duration(.nan) == "--")
    }

    @Test func percentages() {
        #expect(HumanUnits.percent(nil) == "--")
        #expect(HumanUnits.percent(0) == "0%")
        #expect(HumanUnits.percent(0.523) == "52%")
        #expect(HumanUnits.percent(0.999) == "99%", "100% only when done")
        #expect(HumanUnits.percent(1) == "100%")
        #expect(HumanUnits.percent(1.7) == "100%")
        #expect(HumanUnits.percent(-0.2) == "0%")
    }
}
