import Testing
@testable import FerryCore

@Suite struct HostParserTests {
    private func ipv4(_ text: String) -> String? {
        HostParser.parseIPv4(text.split(separator: ".", omittingEmptySubsequences: false)).map(\.description)
    }

    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1" as String?), ("127.1", "127.0.0.1"), ("127.0.1", "127.0.0.1"), ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"), ("0177.0.0.1", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("0x", "0.0.0.0"), ("00", "0.0.0.0"),
        ("1.2.3.4.", "1.2.3.4"), ("0xFF.0377.255.0", "255.255.255.0"), ("4294967295", "255.255.255.255"),
        ("4294967296", nil), ("1.256.1.1", nil), ("1.2.3.4.5", nil), ("", nil), ("1..1", nil), ("08", nil), ("0x1g", nil),
        ("1.2.3.256", nil), ("1.2.65536", nil), ("1.16777216", nil), ("1.16777215", "1.255.255.255"),
        ("00000000000000000000000000001", "0.0.0.1"), ("0x00000000000000000000000000001", "0.0.0.1"),
    ])
    func parsesWHATWGIPv4(text: String, expected: String?) {
        #expect(ipv4(text) == expected)
    }
}
