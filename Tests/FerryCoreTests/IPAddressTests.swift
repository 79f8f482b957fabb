import Testing
@testable import FerryCore

@Suite struct IPAddressTests {
    @Test(arguments: [
        ("0.0.0.0", [0, 0, 0, 0] as [UInt8]), ("127.0.0.1", [127, 0, 0, 1]), ("255.255.255.255", [255, 255, 255, 255]),
        ("192.168.1.10", [192, 168, 1, 10]),
    ])
    func parsesDottedQuads(text: String, bytes: [UInt8]) throws {
        let address = try #require(IPAddress(text))
        #expect(address.bytes == bytes)
        #expect(address.isIPv4)
        #expect(address.description == text)
    }

    @Test(arguments: ["127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "01.2.3.4", "256.0.0.1", "1.2.3", "1.2.3.4.5",
                      "1.2.3.4.", ".1.2.3", "1..2.3", "", " 1.2.3.4", "1.2.3.4 ", "1.2.3.-4", "1.2.3.+4", "١.2.3.4",
                      "[1.2.3.4]", "1.2.3.4%eth0", "1234.1.1.1"])
    func rejectsLenientOrBrokenIPv4(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test(arguments: [
        ("::", "::"), ("::1", "::1"), ("[::1]", "::1"), ("1::", "1::"), ("2001:DB8::1", "2001:db8::1"),
        ("2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"), ("0:0:0:0:0:0:0:0", "::"), ("1:0:0:2:0:0:0:3", "1:0:0:2::3"),
        ("::ffff:1.2.3.4", "::ffff:1.2.3.4"), ("::ffff:0102:0304", "::ffff:1.2.3.4"), ("::1.2.3.4", "::102:304"),
        ("64:ff9b::192.0.2.33", "64:ff9b::c000:221"), ("fe80::1:2", "fe80::1:2"), ("1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"),
        ("::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"), ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"), ("FFFF::", "ffff::"),
    ])
    func parsesAndCanonicalisesIPv6(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.bytes.count == 16)
        #expect(!address.isIPv4)
        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: [":", ":::", "1:::2", "1::2::3", ":1", "1:", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::",
                      "g::", "::1%eth0", "[::1", "::1]", "[]", "::1.2.3", "::1.2.3.4.5", "::256.1.1.1", "1.2.3.4::",
                      "::1.2.3.4:5", "1:2:3:4:5:6:7:1.2.3.4", "::01.2.3.4", "::ffff:1.2.3.4x", "::1 ", "::1:2:3:4:5:6:7:8"])
    func rejectsBrokenIPv6(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func bytesInitialiserChecksLength() {
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(IPAddress(bytes: []) == nil)
        #expect(IPAddress(bytes: [UInt8](repeating: 0, count: 15)) == nil)
        #expect(IPAddress(bytes: [1, 2, 3, 4])?.description == "1.2.3.4")
        #expect(IPAddress(bytes: [UInt8](repeating: 0, count: 16))?.description == "::")
    }

    @Test(arguments: [
        ("::ffff:127.0.0.1", "127.0.0.1" as String?), ("::ffff:10.1.2.3", "10.1.2.3"), ("::127.0.0.1", "127.0.0.1"),
        ("::8.8.8.8", "8.8.8.8"), ("64:ff9b::10.0.0.1", "10.0.0.1"), ("64:ff9b::8.8.8.8", "8.8.8.8"),
        ("::", nil), ("::1", nil), ("::2", "0.0.0.2"), ("2002:7f00:1::", nil), ("2001:db8::1", nil), ("1::ffff:1.2.3.4", nil),
        ("::ffff:0:1.2.3.4", nil), ("64:ff9b:1::1.2.3.4", nil), ("127.0.0.1", nil),
    ])
    func embeddedIPv4(text: String, expected: String?) throws {
        let address = try #require(IPAddress(text))
        #expect(address.embeddedIPv4?.description == expected)
    }

    @Test func equalityIsByBytes() {
        #expect(IPAddress("::1") == IPAddress("0:0:0:0:0:0:0:1"))
        #expect(IPAddress("::ffff:1.2.3.4") != IPAddress("1.2.3.4"))
        #expect(Set([IPAddress("::1")!, IPAddress("[::1]")!]).count == 1)
    }
}
