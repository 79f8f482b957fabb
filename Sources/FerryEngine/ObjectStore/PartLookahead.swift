/// How far a download whose parts are stored while it runs may get ahead of them (pure; issue 33).
///
/// What a node killed in the middle of a download costs the node taking the job over is every byte it had received
/// that no recorded part holds: the part each connection was writing, parts written but not yet stored (waiting for
/// a slot or in flight), and bytes received but not yet written. A fast origin outruns the store, so without a limit
/// that grew with the store's lag (a 200 MiB file killed three times was fetched 138–204 MiB beyond its size). The
/// limit is one part per connection, and at least `PartUploadPlanner.inFlightLimit` parts, so that a download on one
/// connection still writes its next part while the last one uploads. `PartUploadPlanner` holds the download's
/// connections while it is reached and an upload is in flight (whose end asks again).
enum PartLookahead {
    /// The bytes a download on `connections` connections may hold beyond its stored parts.
    static func limit(connections: Int, partSize: Int64) -> Int64 {
        Int64(max(connections, PartUploadPlanner.inFlightLimit)) * max(0, partSize)
    }

    /// Bytes received that no stored part holds: those of `written` outside the parts `stored` (each counted only where
    /// `written` holds all of it), plus `pending`, received and not yet written.
    /// - Parameters:
    ///   - written: the file's written ranges (`SegmentTable.writtenRanges`), possibly unsorted or overlapping.
    ///   - stored: numbers of the parts the store holds (or, after a restore, that the ledger's record still names).
    static func unstored(size: Int64, partSize: Int64, written: [Range<Int64>], stored: Set<Int>, pending: Int64) -> Int64 {
        let runs = PartProgress.merged(written.map { range in
            let lower = min(max(0, range.lowerBound), max(0, size))
            return lower..<max(lower, min(size, range.upperBound))
        })
        var bytes = runs.reduce(Int64(0)) { $0 + Int64($1.count) }
        if partSize > 0, size > 0 {
            let count = Int((size + partSize - 1) / partSize)
            for number in stored where (1...count).contains(number) {
                let range = PartProgress.range(of: number, size: size, partSize: partSize)
                if PartProgress.covers(runs, range) { bytes -= Int64(range.count) }
            }
        }
        return bytes + max(0, pending)
    }
}
