/// Whether and how a download is split over several connections (pure). The engine queue asks it when the first
/// accepted answer to the rest of the file arrives (`DownloadEngine+Fetches`) and when a run resumes split
/// (`DownloadEngine+Runs`), and carries the answer out.
///
/// A download whose spec names no number of connections and that has no mirrors starts on one connection and adds
/// more only while they raise the total (`AdaptiveSplit`); one that names a number (or has mirrors) is divided at
/// once into as many ranges as its host has room for. A split preallocates the rest of the file, so it is made only
/// while that leaves the free-space reserve.
enum SplitPlanner {
    /// Connections wanted for a file of `total` bytes: `asked` (1-16), else `defaultConnections` for a file of at
    /// least `threshold` bytes, else 1; with mirrors, at least one per active source (at most 16). Always 1 when
    /// the transfer may use only one (`segmentable` false).
    static func wantedConnections(total: Int64, asked: Int?, activeSources: Int, segmentable: Bool, threshold: Int64,
                                  defaultConnections: Int) -> Int {
        guard segmentable else { return 1 }
        var wanted = total >= threshold ? max(1, defaultConnections) : 1
        if let asked { wanted = min(max(asked, 1), 16) }
        return activeSources > 1 ? min(16, max(wanted, activeSources)) : wanted
    }

    enum Start: Equatable {
        /// Stay on one connection.
        case none
        /// Start on one connection and ramp up to `wanted` while that pays (`AdaptiveSplit`).
        case adaptive(wanted: Int)
        /// Divide the rest of the file into `count` ranges, wanting `target` connections.
        case split(count: Int, target: Int)
    }

    /// What the first accepted answer to the rest of the file makes of a run that may be split.
    /// - Parameters:
    ///   - remaining: bytes from the running exchange's position to the file's end.
    ///   - chosen: the spec named a number of connections, or the transfer has mirrors.
    ///   - room: connections the run may hold now (its own and what its host has left).
    static func start(remaining: Int64, wanted: Int, chosen: Bool, room: Int, minimumSegmentSize: Int64) -> Start {
        guard chosen else { return wanted > 1 ? .adaptive(wanted: wanted) : .none }
        let count = min(room, SegmentTable.segmentCount(remaining: remaining, connections: wanted, minimumSize: minimumSegmentSize))
        return count > 1 ? .split(count: count, target: wanted) : .none
    }

    /// Whether preallocating `needed` bytes leaves `reserve` free (`free` nil: not known, allowed).
    static func leavesReserve(free: Int64?, needed: Int64, reserve: Int64) -> Bool {
        guard let free else { return true }
        return free - needed >= reserve
    }

    /// Where segment boundaries fall: with parts stored while downloading (`partsStored`, a cluster's object store),
    /// on part boundaries (the upload's part size, else the one a file of `size` bytes gets), so that a segment
    /// never holds a part it shares with its neighbour unstored (issue 33); else anywhere (1).
    static func alignment(partsStored: Bool, size: Int64?, uploadPartSize: Int64?, preferredPartSize: Int64) -> Int64 {
        guard partsStored, let size, size > 0 else { return 1 }
        return uploadPartSize ?? PartPlan.partSize(for: size, preferred: preferredPartSize)
    }
}
