@testable import FerryEngine
import Testing

struct SegmentTableTests {
    typealias Segment = SegmentTable.Segment
    static let mib: Int64 = 1 << 20

    @Test func plansNearEqualRangesCoveringTheFile() {
        let table = SegmentTable.plan(total: 10, from: 0, count: 3)
        #expect(table.segments == [Segment(start: 0, end: 4, next: 0), Segment(start: 4, end: 7, next: 4), Segment(start: 7, end: 10, next: 7)])
        #expect(table.bytesWritten == 0)
        #expect(table.contiguousPrefix == 0)
        #expect(!table.isComplete)
    }

    @Test func planAfterAContiguousPrefixKeepsItAsACompleteSegment() {
        let table = SegmentTable.plan(total: 100, from: 40, count: 2)
        #expect(table.segments == [Segment(start: 0, end: 40, next: 40), Segment(start: 40, end: 70, next: 40), Segment(start: 70, end: 100, next: 70)])
        #expect(table.bytesWritten == 40)
        #expect(table.contiguousPrefix == 40)
    }

    @Test func planNeverMakesEmptySegments() {
        let table = SegmentTable.plan(total: 3, from: 0, count: 16)
        #expect(table.segments.count == 3)
        #expect(table.segments.allSatisfy { $0.end - $0.start == 1 })
    }

    @Test func segmentCountRespectsConnectionsAndMinimumSize() {
        #expect(SegmentTable.segmentCount(remaining: 32 * Self.mib, connections: 4, minimumSize: Self.mib) == 4)
        #expect(SegmentTable.segmentCount(remaining: 32 * Self.mib, connections: 16, minimumSize: Self.mib) == 16)
        #expect(SegmentTable.segmentCount(remaining: 3 * Self.mib + 5, connections: 16, minimumSize: Self.mib) == 3)
        #expect(SegmentTable.segmentCount(remaining: Self.mib - 1, connections: 16, minimumSize: Self.mib) == 1)
        #expect(SegmentTable.segmentCount(remaining: 0, connections: 4, minimumSize: Self.mib) == 1)
        #expect(SegmentTable.segmentCount(remaining: 10 * Self.mib, connections: 0, minimumSize: Self.mib) == 1)
    }

    @Test func recordWrittenOnlyMovesForwardAndStaysInTheSegment() {
        var table = SegmentTable.plan(total: 100, from: 0, count: 2)
        table.recordWritten(start: 50, upTo: 60)
        table.recordWritten(start: 50, upTo: 55)
        #expect(table.segment(startingAt: 50)?.next == 60)
        table.recordWritten(start: 50, upTo: 500)
        #expect(table.segment(startingAt: 50)?.next == 100)
        table.recordWritten(start: 7, upTo: 9)  // no such segment
        #expect(table.bytesWritten == 50)
        #expect(table.contiguousPrefix == 0)
    }

    @Test func contiguousPrefixWalksCompleteSegments() {
        var table = SegmentTable.plan(total: 90, from: 0, count: 3)
        table.recordWritten(start: 30, upTo: 60)
        table.recordWritten(start: 60, upTo: 70)
        #expect(table.contiguousPrefix == 0)
        table.recordWritten(start: 0, upTo: 30)
        #expect(table.contiguousPrefix == 70)
        table.recordWritten(start: 60, upTo: 90)
        #expect(table.contiguousPrefix == 90)
        #expect(table.isComplete)
    }

    @Test func splitGivesTheTailToANewSegment() {
        var table = SegmentTable.plan(total: 100, from: 0, count: 2)
        table.recordWritten(start: 50, upTo: 60)
        let tail = table.split(start: 50, at: 80)
        #expect(tail == Segment(start: 80, end: 100, next: 80))
        #expect(table.segments.map(\.start) == [0, 50, 80])
        #expect(table.segment(startingAt: 50)?.end == 80)
        // Not strictly inside the unwritten part: refused.
        #expect(table.split(start: 50, at: 60) == nil)
        #expect(table.split(start: 50, at: 80) == nil)
        #expect(table.split(start: 51, at: 70) == nil)
        #expect(SegmentTable(total: 100, segments: table.segments) == table)
    }

    @Test func compactingMergesCompleteSegmentsIntoTheNextOne() {
        var table = SegmentTable.plan(total: 100, from: 0, count: 4)  // 0, 25, 50, 75
        table.recordWritten(start: 0, upTo: 25)
        table.recordWritten(start: 25, upTo: 30)
        table.recordWritten(start: 50, upTo: 75)
        table.recordWritten(start: 75, upTo: 100)
        let compact = table.compacted()
        #expect(compact.segments == [Segment(start: 0, end: 50, next: 30), Segment(start: 50, end: 100, next: 100)])
        #expect(compact.bytesWritten == table.bytesWritten)
        #expect(compact.contiguousPrefix == table.contiguousPrefix)
    }

    @Test func storedSegmentsMustCoverTheFile() {
        #expect(SegmentTable(total: 10, segments: [Segment(start: 0, end: 10, next: 3)]) != nil)
        #expect(SegmentTable(total: 10, segments: [Segment(start: 0, end: 5, next: 0), Segment(start: 6, end: 10, next: 6)]) == nil)
        #expect(SegmentTable(total: 10, segments: [Segment(start: 0, end: 5, next: 0), Segment(start: 4, end: 10, next: 4)]) == nil)
        #expect(SegmentTable(total: 10, segments: [Segment(start: 0, end: 9, next: 0)]) == nil)
        #expect(SegmentTable(total: 10, segments: [Segment(start: 0, end: 10, next: 11)]) == nil)
        #expect(SegmentTable(total: 10, segments: [Segment(start: 1, end: 10, next: 1)]) == nil)
        #expect(SegmentTable(total: 0, segments: []) == nil)
    }

    @Test func aDownloadBeginsAsOneOpenEndedSegmentFromTheBytesOnDisk() {
        var table = SegmentTable.open(from: 40)
        #expect(table.knownTotal == nil)
        #expect(table.segments.map(\.start) == [0, 40])
        #expect(table.bytesWritten == 40)
        #expect(!table.isComplete)
        #expect(table.split(start: 40, at: 100) == nil)  // an open-ended segment cannot be split
        table.recordWritten(start: 40, upTo: 70)
        table.close(total: 70)
        #expect(table.knownTotal == 70)
        #expect(table.isComplete)
    }

    @Test func closingAtTheBytesOnDiskCompletesTheFile() {
        var table = SegmentTable.open(from: 100)
        table.close(total: 100)
        #expect(table.segments == [.init(start: 0, end: 100, next: 100)])
        #expect(table.isComplete)
        var empty = SegmentTable.open(from: 0)
        empty.close(total: 0)
        #expect(empty.segments.isEmpty)
        #expect(empty.isComplete)
    }

    @Test func dividingASegmentMatchesAFreshPlan() {
        var table = SegmentTable.open(from: 40)
        table.close(total: 100)
        table.divide(start: 40, into: 3)
        #expect(table == SegmentTable.plan(total: 100, from: 40, count: 3))
        #expect(table.segments.map(\.start) == [0, 40, 60, 80])
        var open = SegmentTable.open(from: 0)
        open.divide(start: 0, into: 4)
        #expect(open.segments.count == 1)
    }

    /// With parts stored while downloading, boundaries fall on part boundaries (issue 33): a segment then never holds
    /// a part it shares with its neighbour, unstored until both have written it.
    @Test func dividingWithAnAlignmentPutsBoundariesOnItsMultiples() {
        var table = SegmentTable.open(from: 5)
        table.close(total: 100)
        table.divide(start: 5, into: 3, alignment: 10)
        #expect(table.segments.map(\.start) == [0, 5, 40, 70])
        #expect(table.segments.map(\.end) == [5, 40, 70, 100])
        // No multiple inside a piece: the boundary stays where the plan put it.
        var small = SegmentTable.open(from: 0)
        small.close(total: 9)
        small.divide(start: 0, into: 3, alignment: 10)
        #expect(small.segments.map(\.start) == [0, 3, 6])
    }

    @Test func alignmentMovesUpThenDownAndNeverOntoTheBounds() {
        #expect(SegmentTable.align(37, to: 10, inside: 5..<100) == 40)
        #expect(SegmentTable.align(37, to: 10, inside: 5..<40) == 30)
        #expect(SegmentTable.align(37, to: 10, inside: 30..<40) == 37)
        #expect(SegmentTable.align(40, to: 10, inside: 5..<100) == 40)
        #expect(SegmentTable.align(37, to: 1, inside: 5..<100) == 37)
    }

    @Test func aRestoredTableHoldsExactlyTheRestoredRanges() throws {
        let table = try #require(SegmentTable.restored(total: 100, written: [60..<80, 10..<20, 20..<30]))
        #expect(table.segments == [
            .init(start: 0, end: 10, next: 0),
            .init(start: 10, end: 60, next: 30),
            .init(start: 60, end: 100, next: 80),
        ])
        #expect(table.writtenRanges == [10..<30, 60..<80])
        #expect(table.bytesWritten == 40)
        #expect(table.contiguousPrefix == 0)
        let prefix = try #require(SegmentTable.restored(total: 100, written: [0..<40, 90..<120]))
        #expect(prefix.segments == [.init(start: 0, end: 90, next: 40), .init(start: 90, end: 100, next: 100)])
        #expect(prefix.contiguousPrefix == 40)
        let nothing = try #require(SegmentTable.restored(total: 100, written: []))
        #expect(nothing.segments == [.init(start: 0, end: 100, next: 0)])
        #expect(nothing.writtenRanges.isEmpty)
        #expect(SegmentTable.restored(total: 0, written: []) == nil)
    }

    @Test func writtenRangesJoinTouchingSegments() {
        var table = SegmentTable.plan(total: 100, from: 0, count: 4)
        table.recordWritten(start: 0, upTo: 25)
        table.recordWritten(start: 25, upTo: 30)
        table.recordWritten(start: 75, upTo: 80)
        #expect(table.writtenRanges == [0..<30, 75..<80])
        #expect(SegmentTable.open(from: 40).writtenRanges == [0..<40])
    }
}
