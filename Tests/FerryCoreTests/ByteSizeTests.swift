import Testing
@testable import FerryCore

@Suite struct ByteSizeTests {
    @Test(arguments: [
        ("0", Int64(0)), ("1024", 1024), ("10K", 10_000), ("10k", 10_000), ("10KB", 10_000), ("10kb", 10_000),
        ("10KiB", 10_240), ("10kib", 10_240), ("10KIB", 10_240), ("10Ki", 10_240),
        ("5M", 5_000_000), ("5MiB", 5_242_880), ("1G", 1_000_000_000), ("1GiB", 1_073_741_824),
        ("2T", 2_000_000_000_000), ("1TiB", 1_099_511_627_776), ("1P", 1_000_000_000_000_000), ("1PiB", 1_125_899_906_842_624),
        ("1.5GiB", 1_610_612_736), ("1.5G", 1_500_000_000), ("0.5K", 500), (".5K", 500), ("1.", 1),
        ("100B", 100), ("100b", 100), (" 10 MiB ", 10_485_760), ("1.0001K", 1000), ("1.9999", 1),
        ("9223372036854775807", Int64.max), ("8EiB", -1),
    ])
    func parses(text: String, expected: Int64) {
        #expect(ByteSize.parse(text) == (expected < 0 ? nil : expected))
    }

    @Test(arguments: ["", " ", "K", "GiB", "-1", "-1K", "1e3", "1X", "1 2", "1..5K", "1.5.5", "10KiBB", "abc",
                      "9223372036854775808", "9999999999999999999999", "9300P", "8388608TiB", "0x10", "1,000", "+5"])
    func rejects(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    @Test func fractionsRoundDown() {
        #expect(ByteSize.parse("1.9999999999999999999999999KiB") == 2047)
        #expect(ByteSize.parse("0.9999999999999999999999999KiB") == 1023)
        #expect(ByteSize.parse("0.0001K") == 0)
        #expect(ByteSize.parse("1.5") == 1)
    }
}
