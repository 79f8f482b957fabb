import Testing
@testable import FerryCore

@Suite struct NumberWithUnitTests {
    @Test func splitsNumberAndUnit() throws {
        let value = try #require(NumberWithUnit("12.50 GiB"))
        #expect(value.integerDigits == "12")
        #expect(value.fractionDigits == "50")
        #expect(value.unit == "GiB")
        #expect(value.doubleValue == 12.5)
        #expect(NumberWithUnit(".5")?.doubleValue == 0.5)
        #expect(NumberWithUnit("7")?.unit == "")
    }

    @Test func rejectsNonNumbers() {
        #expect(NumberWithUnit("") == nil)
        #expect(NumberWithUnit(".") == nil)
        #expect(NumberWithUnit("K") == nil)
        #expect(NumberWithUnit("1K2") == nil)
        #expect(NumberWithUnit("1 K!") == nil)
        #expect(NumberWithUnit("-1") == nil)
    }

    @Test func scalesExactlyAndDetectsOverflow() {
        #expect(NumberWithUnit("3")?.scaled(by: 1024) == 3072)
        #expect(NumberWithUnit("0.1")?.scaled(by: 10) == 1)
        #expect(NumberWithUnit("0.3")?.scaled(by: 10) == 3)        // no binary rounding loss
        #expect(NumberWithUnit("1.5")?.scaled(by: 3) == 4)
        #expect(NumberWithUnit("9223372036854775807")?.scaled(by: 1) == Int64.max)
        #expect(NumberWithUnit("9223372036854775807")?.scaled(by: 2) == nil)
        #expect(NumberWithUnit("9223372036854775807.5")?.scaled(by: 1) == Int64.max)
        #expect(NumberWithUnit("9223372036854775806.5")?.scaled(by: 2) == nil)
    }
}
