/// Which byte ranges of a file have been written, and how far they reach from byte 0 without a gap.
///
/// Pure value, owned by a `FileWriter` (its queue). Segments write their ranges in any order; the digest can
/// only take bytes in file order, so the writer hashes up to `prefix` as it grows. Ranges beyond the prefix are
/// kept merged (sorted, disjoint, never touching), so there is at most about one per segment.
///
/// ```swift
/// var written = ContiguousPrefix()
/// written.insert(100..<200)   // prefix 0
/// written.insert(0..<100)     // prefix 200
/// ```
struct ContiguousPrefix: Equatable, Sendable {
    /// Bytes `[0, prefix)` are all written.
    private(set) var prefix: Int64
    /// Written ranges past the prefix: sorted, disjoint, separated by gaps, all above `prefix`.
    private(set) var islands: [Range<Int64>] = []

    init(prefix: Int64 = 0) { self.prefix = prefix }

    /// Records a written range (overlaps with earlier ranges are harmless).
    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty, range.upperBound > prefix else { return }
        var low = max(range.lowerBound, prefix)
        var high = range.upperBound
        // Absorb every island that overlaps or touches [low, high).
        var kept: [Range<Int64>] = []
        kept.reserveCapacity(islands.count + 1)
        var inserted = false
        for island in islands {
            if island.upperBound < low {
                kept.append(island)
            } else if island.lowerBound > high {
                if !inserted { kept.append(low..<high); inserted = true }
                kept.append(island)
            } else {
                low = min(low, island.lowerBound)
                high = max(high, island.upperBound)
            }
        }
        if !inserted { kept.append(low..<high) }
        if let first = kept.first, first.lowerBound <= prefix {
            prefix = first.upperBound
            kept.removeFirst()
        }
        islands = kept
    }

    /// Forgets everything: only `[0, prefix)` is written.
    mutating func reset(prefix: Int64 = 0) {
        self.prefix = prefix
        islands = []
    }
}
