import Testing
@testable import FerryCore

@Suite struct DurationTextTests {
    @Test(arguments: [
        ("30s", 30.0), ("30", 30), ("0", 0), ("5m", 300), ("2h", 7200), ("7d", 604_800), ("1.5h", 5400),
        ("30S", 30), ("2H", 7200), ("7D", 604_800), ("500ms", 0.5), ("1h30m", 5400), ("1d 12h", 129_600),
        (" 10m ", 600), ("0.25", 0.25), (".5m", 30), ("10 s", 10),
    ])
    func parses(text: String, expected: Double) {
        #expect(DurationText.parse(text) == expected)
    }

    @Test(arguments: ["", "s", "-5s", "5x", "5 minutes", "1h30", "30 1h", "1e3", "h1", "1.2.3s", "5sm", "--", "nan", "inf"])
    func rejects(text: String) {
        #expect(DurationText.parse(text) == nil)
    }
}
