@testable import FerryEngine
import Testing

@Suite("WriteBehind")
struct WriteBehindTests {
    static let mib: Int64 = 1 << 20

    @Test func writeBackStartsEverySixteenMebibytes() {
        var behind = WriteBehind()
        func starts(_ count: Int64) -> Bool { behind.wrote(count) }
        #expect(!starts(15 * Self.mib))
        #expect(starts(Self.mib))
        #expect(!starts(Self.mib))
        #expect(!starts(14 * Self.mib))
        #expect(starts(2 * Self.mib))
        // One write of more than the interval starts it once, and counts from zero after.
        #expect(starts(40 * Self.mib))
        #expect(!starts(15 * Self.mib))
    }

    @Test func thePageCacheOnlyWriterWaitsForWhatLiesOutsideTheWindow() {
        var behind = WriteBehind()
        let within = behind.settle(prefix: 64 * Self.mib)
        #expect(within == nil)
        let first = behind.settle(prefix: 80 * Self.mib)
        #expect(first?.offset == 0 && first?.length == 16 * Self.mib)
        #expect(behind.settledUpTo == 16 * Self.mib)
        let unchanged = behind.settle(prefix: 80 * Self.mib)
        #expect(unchanged == nil)
        let next = behind.settle(prefix: 100 * Self.mib)
        #expect(next?.offset == 16 * Self.mib && next?.length == 20 * Self.mib)
        behind.restart()
        let again = behind.settle(prefix: 70 * Self.mib)
        #expect(again?.offset == 0 && again?.length == 6 * Self.mib)
    }
}
