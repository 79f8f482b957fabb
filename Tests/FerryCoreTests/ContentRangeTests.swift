import Testing
@testable import FerryCore

@Suite struct ContentRangeTests {
    @Test func parsesAndFormats() {
        #expect(ContentRange.parse("bytes 0-99/1000") == ContentRange(first: 0, last: 99, total: 1000))
        #expect(ContentRange.parse("bytes 0-99/*") == ContentRange(first: 0, last: 99, total: nil))
        #expect(ContentRange.parse("bytes */1000") == nil)
        #expect(ContentRange.parse("bytes 10-5/1000") == nil)
        #expect(ContentRange.parse("bytes 0-1000/1000") == nil)
        #expect(ContentRange.parse("items 0-1/2") == nil)
        #expect(ContentRange(first: 0, last: 99, total: 1000).headerValue == "bytes 0-99/1000")
        #expect(ContentRange(first: 5, last: 9, total: nil).headerValue == "bytes 5-9/*")
        #expect(ContentRange.unsatisfied(total: 42) == "bytes */42")
    }
}
