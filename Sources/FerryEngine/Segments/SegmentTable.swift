/// The byte ranges of one download, and how far each range has been written.
///
/// Pure value, owned by whoever owns the transfer (the engine queue). Offsets are absolute byte offsets in the
/// file, ends are exclusive. The segments are sorted by `start` and cover `[0, total)` exactly, without gaps or
/// overlaps; each one is filled from its start, so "written" is one number per segment (`next`). A segment's
/// `start` never changes, so it names the segment; only its `end` moves, when another connection takes over the
/// tail (`split`, `divide`).
///
/// Every download starts as one segment from the bytes already on disk to the end of the file (`open(from:)`),
/// open-ended (`openEnd`) until a response gives the file's size (`close(total:)`); a download over several
/// connections then divides it.
///
/// ```swift
/// var table = SegmentTable.open(from: 0)                              // [0, open)
/// table.close(total: 32 << 20)                                        // [0, 32 MiB)
/// table.divide(start: 0, into: 4)                                     // 4 ranges of 8 MiB
/// table.recordWritten(start: 0, upTo: 1 << 20)
/// let stolen = table.split(start: 8 << 20, at: 12 << 20)              // [12 MiB, 16 MiB) for another connection
/// ```
struct SegmentTable: Equatable, Sendable {
    struct Segment: Equatable, Sendable {
        /// The first byte of the range; also the segment's name.
        let start: Int64
        /// One past the last byte of the range.
        var end: Int64
        /// One past the last byte written: bytes `[start, next)` are in the file.
        var next: Int64

        var remaining: Int64 { end - next }
        var isComplete: Bool { next >= end }
        var written: Int64 { next - start }
    }

    /// The end of the last segment while the file's size is unknown.
    static let openEnd = Int64.max

    /// The size of the file (`openEnd` while unknown: see `knownTotal`).
    private(set) var total: Int64
    /// Sorted by `start`, covering `[0, total)`.
    private(set) var segments: [Segment]

    /// A table from stored segments; nil unless they cover `[0, total)` in order with `start ≤ next ≤ end`.
    init?(total: Int64, segments: [Segment]) {
        guard total > 0, !segments.isEmpty else { return nil }
        var expected: Int64 = 0
        for segment in segments {
            guard segment.start == expected, segment.start < segment.end,
                  segment.start <= segment.next, segment.next <= segment.end else { return nil }
            expected = segment.end
        }
        guard expected == total else { return nil }
        self.total = total
        self.segments = segments
    }

    /// How many ranges to split `remaining` bytes into: at most `connections`, and none smaller than
    /// `minimumSize` (so a small file stays in one piece). Always at least 1.
    static func segmentCount(remaining: Int64, connections: Int, minimumSize: Int64) -> Int {
        guard remaining > 0 else { return 1 }
        let bySize = remaining / max(1, minimumSize)
        return Int(max(1, min(Int64(max(1, connections)), bySize)))
    }

    private init(total: Int64, checkedSegments: [Segment]) {
        self.total = total
        self.segments = checkedSegments
    }

    /// A file of unknown size whose bytes `[0, offset)` are on disk (one complete segment, when `offset` > 0),
    /// then one open-ended segment from `offset`.
    static func open(from offset: Int64) -> SegmentTable {
        precondition(offset >= 0, "open needs 0 ≤ offset")
        var segments: [Segment] = []
        if offset > 0 { segments.append(Segment(start: 0, end: offset, next: offset)) }
        segments.append(Segment(start: offset, end: openEnd, next: offset))
        return SegmentTable(total: openEnd, checkedSegments: segments)
    }

    /// A fresh table: `[0, offset)` already written, then `[offset, total)` split into `count` ranges of
    /// near-equal size (the first ones one byte longer).
    static func plan(total: Int64, from offset: Int64, count: Int) -> SegmentTable {
        precondition(total > 0 && offset >= 0 && offset < total, "plan needs 0 ≤ offset < total")
        var table = open(from: offset)
        table.close(total: total)
        table.divide(start: offset, into: count)
        return table
    }

    /// The file's size, or nil while the last segment is open-ended.
    var knownTotal: Int64? { total == Self.openEnd ? nil : total }

    /// The size is now known: segments at or past `total` are dropped and the last one ends there (a file that
    /// ends where the bytes on disk end is complete).
    mutating func close(total: Int64) {
        precondition(total >= 0, "a file's size is never negative")
        segments.removeAll { $0.start >= total }
        if let last = segments.indices.last {
            segments[last].end = total
            segments[last].next = min(segments[last].next, total)
        }
        self.total = total
    }

    /// Splits the unwritten part of a segment into `count` ranges of near-equal size (the first ones one byte
    /// longer); the segment keeps its written bytes and the first range. No-op for an open-ended segment.
    /// - Parameter alignment: boundaries are moved to multiples of it where one lies inside the piece (with an object
    ///   store, the part size: each connection then holds at most the one part it is writing unstored).
    mutating func divide(start: Int64, into count: Int, alignment: Int64 = 1) {
        guard let segment = segment(startingAt: start), segment.end != Self.openEnd else { return }
        let remaining = segment.remaining
        let parts = max(1, min(Int64(count), remaining))
        let base = remaining / parts
        let longer = remaining % parts
        var pieceStart = start
        var boundary = segment.next
        for index in 0..<(parts - 1) {
            boundary += base + (index < longer ? 1 : 0)
            let current = self.segment(startingAt: pieceStart)
            let at = Self.align(boundary, to: alignment, inside: (current?.next ?? boundary)..<(current?.end ?? boundary))
            guard let tail = split(start: pieceStart, at: at) else { return }
            pieceStart = tail.start
        }
    }

    /// `offset` moved to a multiple of `alignment` strictly inside `bounds` (the nearest above it, else below), or
    /// left where it is when no multiple lies strictly inside. Pure.
    static func align(_ offset: Int64, to alignment: Int64, inside bounds: Range<Int64>) -> Int64 {
        guard alignment > 1, offset % alignment != 0 else { return offset }
        let down = offset / alignment * alignment, up = down + alignment
        if up > bounds.lowerBound, up < bounds.upperBound { return up }
        if down > bounds.lowerBound, down < bounds.upperBound { return down }
        return offset
    }

    /// The segment starting at `start`, if any.
    func segment(startingAt start: Int64) -> Segment? {
        index(of: start).map { segments[$0] }
    }

    /// Records that bytes `[start, upTo)` of a segment are written (its writes complete in order). Never moves
    /// `next` backwards or past the segment's end.
    mutating func recordWritten(start: Int64, upTo: Int64) {
        guard let index = index(of: start) else { return }
        segments[index].next = min(segments[index].end, max(segments[index].next, upTo))
    }

    /// Gives the tail of a segment to another connection: the segment now ends at `offset`, and a new segment
    /// `[offset, old end)` is returned (and inserted). Nil when `offset` is not strictly inside the segment's
    /// unwritten part, or the segment is open-ended.
    @discardableResult
    mutating func split(start: Int64, at offset: Int64) -> Segment? {
        guard let index = index(of: start) else { return nil }
        let victim = segments[index]
        guard victim.end != Self.openEnd, offset > victim.next, offset < victim.end else { return nil }
        let tail = Segment(start: offset, end: victim.end, next: offset)
        segments[index].end = offset
        segments.insert(tail, at: index + 1)
        return tail
    }

    /// A table of `total` bytes of which exactly `written` are written (sorted or not; overlapping or touching
    /// ranges are joined, ranges past `total` clamped): one segment from 0 or from the start of each written range
    /// to the start of the next one, written up to the range's end. What a node restoring non-contiguous stored
    /// parts resumes from. Nil when `total` is not positive.
    static func restored(total: Int64, written: [Range<Int64>]) -> SegmentTable? {
        guard total > 0 else { return nil }
        let ranges = PartProgress.merged(written.map { max(0, $0.lowerBound)..<min(total, max($0.upperBound, 0)) }
            .filter { $0.lowerBound < $0.upperBound })
        var segments: [Segment] = []
        if ranges.first?.lowerBound != 0 { segments.append(Segment(start: 0, end: ranges.first?.lowerBound ?? total, next: 0)) }
        for (index, range) in ranges.enumerated() {
            let end = index + 1 < ranges.count ? ranges[index + 1].lowerBound : total
            segments.append(Segment(start: range.lowerBound, end: end, next: range.upperBound))
        }
        return SegmentTable(total: total, segments: segments)
    }

    /// The written ranges `[start, next)` of the segments, joined where they touch, in file order.
    var writtenRanges: [Range<Int64>] {
        var ranges: [Range<Int64>] = []
        for segment in segments where segment.next > segment.start {
            if let last = ranges.last, last.upperBound == segment.start {
                ranges[ranges.count - 1] = last.lowerBound..<segment.next
            } else {
                ranges.append(segment.start..<segment.next)
            }
        }
        return ranges
    }

    /// Bytes written over all segments.
    var bytesWritten: Int64 { segments.reduce(0) { $0 + $1.written } }

    /// How far the file is written without a gap from byte 0.
    var contiguousPrefix: Int64 {
        var prefix: Int64 = 0
        for segment in segments {
            prefix = segment.next
            if !segment.isComplete { break }
        }
        return prefix
    }

    var isComplete: Bool { segments.allSatisfy(\.isComplete) }

    /// The same state with each complete segment merged into the segment after it (`[a, b)` complete and
    /// `[b, c)` written up to `n` become `[a, c)` written up to `n`): what is worth storing.
    func compacted() -> SegmentTable {
        var merged: [Segment] = []
        for segment in segments {
            if let last = merged.last, last.isComplete {
                merged[merged.count - 1] = Segment(start: last.start, end: segment.end, next: segment.next)
            } else {
                merged.append(segment)
            }
        }
        return SegmentTable(total: total, checkedSegments: merged)
    }

    /// Binary search by start.
    private func index(of start: Int64) -> Int? {
        var low = 0, high = segments.count
        while low < high {
            let mid = (low + high) / 2
            if segments[mid].start < start { low = mid + 1 } else { high = mid }
        }
        return low < segments.count && segments[low].start == start ? low : nil
    }
}
