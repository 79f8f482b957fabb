@testable import FerryEngine
import Testing

struct ContiguousPrefixTests {
    @Test func inOrderWritesGrowThePrefix() {
        var written = ContiguousPrefix()
        written.insert(0..<10)
        written.insert(10..<25)
        #expect(written.prefix == 25)
        #expect(written.islands.isEmpty)
    }

    @Test func islandsJoinThePrefixWhenTheGapFills() {
        var written = ContiguousPrefix()
        written.insert(50..<60)
        written.insert(20..<30)
        written.insert(60..<70)
        #expect(written.prefix == 0)
        #expect(written.islands == [20..<30, 50..<70])
        written.insert(0..<20)
        #expect(written.prefix == 30)
        #expect(written.islands == [50..<70])
        written.insert(30..<50)
        #expect(written.prefix == 70)
        #expect(written.islands.isEmpty)
    }

    @Test func overlapsAndDuplicatesAreHarmless() {
        var written = ContiguousPrefix(prefix: 10)
        written.insert(5..<8)
        #expect(written.prefix == 10)
        written.insert(15..<30)
        written.insert(20..<40)
        written.insert(12..<16)
        #expect(written.islands == [12..<40])
        written.insert(8..<13)
        #expect(written.prefix == 40)
        written.insert(40..<40)
        #expect(written.prefix == 40)
        written.reset()
        #expect(written.prefix == 0 && written.islands.isEmpty)
    }

    @Test func matchesABruteForceModel() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var written = ContiguousPrefix()
            var bytes = [Bool](repeating: false, count: 64)
            for _ in 0..<12 {
                let a = Int.random(in: 0..<64, using: &generator)
                let b = Int.random(in: a...64, using: &generator)
                written.insert(Int64(a)..<Int64(b))
                for i in a..<b { bytes[i] = true }
                let expected = bytes.firstIndex(of: false) ?? 64
                #expect(written.prefix == Int64(expected))
                for island in written.islands {
                    #expect(island.lowerBound > written.prefix)
                    #expect((Int(island.lowerBound)..<Int(island.upperBound)).allSatisfy { bytes[$0] })
                    #expect(!bytes[Int(island.lowerBound) - 1])
                    if island.upperBound < 64 { #expect(!bytes[Int(island.upperBound)]) }
                }
                let covered = written.prefix + written.islands.reduce(0) { $0 + $1.upperBound - $1.lowerBound }
                #expect(covered == Int64(bytes.filter { $0 }.count))
            }
        }
    }
}
