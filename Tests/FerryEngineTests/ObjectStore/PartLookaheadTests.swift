import Testing
@testable import FerryEngine

@Suite("PartLookahead")
struct PartLookaheadTests {
    static let part: Int64 = 5 << 20
    static let size = 10 * part + 100

    @Test func theLimitIsAPartPerConnectionAndAtLeastTheUploadsInFlight() {
        #expect(PartLookahead.limit(connections: 4, partSize: Self.part) == 4 * Self.part)
        #expect(PartLookahead.limit(connections: 1, partSize: Self.part) == Int64(PartUploadPlanner.inFlightLimit) * Self.part)
        #expect(PartLookahead.limit(connections: 16, partSize: 100) == 1600)
    }

    @Test func storedPartsCountOnlyWhereTheWrittenBytesHoldThemWhole() {
        let part = Self.part
        // Parts 1 and 2 written and stored, part 3 half written.
        #expect(PartLookahead.unstored(size: Self.size, partSize: part, written: [0..<(2 * part + part / 2)],
                                       stored: [1, 2], pending: 0) == part / 2)
        // Two segments, each a part and a bit in; only the first's part stored; bytes not yet written count.
        let written = [0..<(part + 10), (5 * part)..<(6 * part + 20)]
        #expect(PartLookahead.unstored(size: Self.size, partSize: part, written: written, stored: [1], pending: 7)
            == 10 + part + 20 + 7)
        // A stored part the written bytes do not hold is not subtracted (nor one past the file's end).
        #expect(PartLookahead.unstored(size: Self.size, partSize: part, written: [0..<part], stored: [1, 4, 99], pending: 0) == 0)
        #expect(PartLookahead.unstored(size: Self.size, partSize: part, written: [(3 * part)..<(4 * part - 1)],
                                       stored: [4], pending: 0) == part - 1)
        // Overlapping, touching and out-of-file ranges are counted once and clamped; the short last part counts.
        #expect(PartLookahead.unstored(size: Self.size, partSize: part,
                                       written: [(10 * part)..<(Self.size + 50), 0..<part, (part / 2)..<part], stored: [11],
                                       pending: 0) == part)
        #expect(PartLookahead.unstored(size: Self.size, partSize: part, written: [], stored: [], pending: 0) == 0)
    }
}
