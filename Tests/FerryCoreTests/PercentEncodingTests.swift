import Testing
@testable import FerryCore

@Suite struct PercentEncodingTests {
    @Test func lenientDecodeKeepsStrayPercentSigns() {
        #expect(PercentEncoding.decode("a%20b".utf8) == Array("a b".utf8))
        #expect(PercentEncoding.decode("%E2%82%ac".utf8) == [0xE2, 0x82, 0xAC])
        #expect(PercentEncoding.decode("100%".utf8) == Array("100%".utf8))
        #expect(PercentEncoding.decode("%zz%4".utf8) == Array("%zz%4".utf8))
        #expect(PercentEncoding.decode("%2525".utf8) == Array("%25".utf8))
    }

    @Test func strictDecodeRejectsStrayPercentSigns() {
        #expect(PercentEncoding.decodeStrict("a%20b".utf8) == Array("a b".utf8))
        #expect(PercentEncoding.decodeStrict("100%".utf8) == nil)
        #expect(PercentEncoding.decodeStrict("%4".utf8) == nil)
        #expect(PercentEncoding.decodeStrict("%g0".utf8) == nil)
    }

    @Test func encodeUsesUppercaseHex() {
        #expect(PercentEncoding.encode("a b€".utf8) { $0 != 0x20 && $0 < 0x80 } == "a%20b%E2%82%AC")
        #expect(PercentEncoding.encode([0x00, 0xFF]) { _ in false } == "%00%FF")
    }
}
