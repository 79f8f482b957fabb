@testable import FerryEngine
import Testing

/// Which ranges of a delivered file are advised ahead of the reads (`ReadAhead`).
@Suite("Delivery read-ahead")
struct ReadAheadTests {
    @Test func theFirstReadAdvisesAWindowAndLaterOnesKeepHalfAWindowAhead() {
        var ahead = ReadAhead(window: 100)
        #expect(ahead.advice(at: 0, size: 1_000) == 0..<100)
        #expect(ahead.advice(at: 10, size: 1_000) == nil, "90 still advised ahead")
        #expect(ahead.advice(at: 50, size: 1_000) == nil, "exactly half a window ahead")
        #expect(ahead.advice(at: 51, size: 1_000) == 100..<151)
        #expect(ahead.advice(at: 101, size: 1_000) == nil, "50 still advised ahead")
        #expect(ahead.advice(at: 120, size: 1_000) == 151..<220)
        #expect(ahead.advice(at: 102, size: 1_000) == nil, "reads never go back, but nothing breaks if they do")
    }

    @Test func everyByteIsAdvisedOnceAndNothingPastTheEnd() {
        let size: Int64 = 10_007
        var ahead = ReadAhead(window: 64)
        var covered: [Range<Int64>] = []
        var offset: Int64 = 0
        while offset < size {
            if let range = ahead.advice(at: offset, size: size) { covered.append(range) }
            offset = min(size, offset + 7)
        }
        #expect(covered.first?.lowerBound == 0)
        #expect(covered.last?.upperBound == size)
        for (previous, next) in zip(covered, covered.dropFirst()) {
            #expect(previous.upperBound == next.lowerBound, "no gap and no overlap: \(previous) then \(next)")
        }
        #expect(ahead.advice(at: size, size: size) == nil)
    }

    @Test func readsThatJumpPastTheAdvisedRangeAreAdvisedFromWhereTheyAre() {
        var ahead = ReadAhead(window: 100)
        _ = ahead.advice(at: 0, size: 1_000)
        #expect(ahead.advice(at: 500, size: 1_000) == 500..<600)
        #expect(ahead.advice(at: 990, size: 1_000) == 990..<1_000)
    }

    @Test func anEmptyFileIsNeverAdvised() {
        var ahead = ReadAhead()
        #expect(ahead.advice(at: 0, size: 0) == nil)
    }
}
