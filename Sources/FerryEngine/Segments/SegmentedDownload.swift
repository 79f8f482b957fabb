import Dispatch
import FerryCore

/// One run of a transfer's download, from the opened partial file to the finish or a stop: the table of ranges,
/// the fetches filling them, and the bookkeeping for saving the table.
///
/// Every download is a segmented one. A run begins with one fetch asking for the rest of the file (one
/// open-ended segment, `SegmentTable.open(from:)`); when the answer shows the file can be split, the segment is
/// divided and more fetches ask for the other ranges (`split`). A partial file with saved segment state resumes
/// split at once.
///
/// Confined to the engine queue. Replaced by a fresh instance whenever the download starts again (from zero, or
/// after the writer was reopened), so late completions of the old one are recognised (`transfer.segmented !==
/// self`) and ignored.
final class SegmentedDownload: @unchecked Sendable {
    /// What has been written where; updated only when the writer confirms a write.
    var table: SegmentTable
    /// The `If-Range` value every segment request carries; nil until the file is split, while the one fetch asks
    /// for the rest of the file.
    private(set) var validator: String?
    /// Connections wanted.
    var target: Int
    /// The URL requests go to: the first exchange's URL after redirects once split (so every segment reaches the
    /// same server), else the transfer's URL.
    var requestURL: String
    /// Bytes already written when this run began (the offset `.started` and `.responded` report).
    let startBytes: Int64
    /// Fetches by the start of their segment.
    var fetches: [Int64: SegmentFetch] = [:]
    /// Bytes of the file received so far (written or on their way to the writer).
    var bytesReceived: Int64
    /// Bytes handed to the writer and not yet confirmed.
    var pendingWriteBytes = 0
    /// A write failed; the download stops.
    var writeFailure: SystemError?
    /// `.responded` was emitted in this run.
    var responded = false
    /// When the table is saved next.
    var saves = SegmentSaves()
    /// The connection ramp of a download that did not ask for a number of connections (nil once it ended, or for
    /// one that asked), and the split it will make on its first raise: the validator and URL of the first answer.
    var adaptive: AdaptiveSplit?
    var deferredSplit: (validator: String, requestURL: String)?
    /// Progress sampling of the run (`DownloadEngine+Sampling`).
    var meter = SpeedMeter()
    var lastReportedBytes: Int64 = -1

    init(table: SegmentTable, validator: String?, target: Int, requestURL: String) {
        self.table = table
        self.validator = validator
        self.target = max(1, target)
        self.requestURL = requestURL
        self.startBytes = table.bytesWritten
        self.bytesReceived = table.bytesWritten
    }

    /// A run that fetches the rest of the file from `offset` over one connection.
    static func rest(from offset: Int64, requestURL: String) -> SegmentedDownload {
        let run = SegmentedDownload(table: .open(from: offset), validator: nil, target: 1, requestURL: requestURL)
        run.fetches[offset] = SegmentFetch(segmentStart: offset, position: offset)
        return run
    }

    /// Whether the file is split into ranges fetched with their own requests (and its state saved in a sidecar).
    var isSplit: Bool { validator != nil }

    /// The segment state to save; nil while not split (the file on disk is then one contiguous run of bytes).
    var sidecar: SegmentSidecar? { validator.map { SegmentSidecar(validator: $0, table: table) } }

    /// Divides the first fetch's segment into `count` ranges validated by `validator`, wanting `target`
    /// connections and sending segment requests to `requestURL`.
    func split(_ fetch: SegmentFetch, into count: Int, validator: String, target: Int, requestURL: String, alignment: Int64 = 1) {
        table.divide(start: fetch.segmentStart, into: count, alignment: alignment)
        self.validator = validator
        self.target = max(1, target)
        self.requestURL = requestURL
    }

    /// Fetches with an exchange in the multi.
    var connectedCount: Int { fetches.values.filter(\.isConnected).count }

    /// Incomplete segments no fetch is assigned to, lowest first.
    var unassigned: [SegmentTable.Segment] {
        table.segments.filter { !$0.isComplete && fetches[$0.start] == nil }
    }

    /// Whether `fetch` works for this run.
    func owns(_ fetch: SegmentFetch) -> Bool { fetches[fetch.segmentStart] === fetch }

    /// The fetch to connect next, in order: one waiting for a connection whose back-off is over (lowest segment
    /// first), a new one for the first unassigned segment, or, once split, a new one for the back half of the
    /// slowest segment's remainder (`WorkStealing`; `split` names the segment cut and where). Nil: none.
    func nextFetch(now: Double, minimumPiece: Int64, alignment: Int64) -> (fetch: SegmentFetch, split: (victim: Int64, at: Int64)?)? {
        if let waiting = fetches.values.filter({ $0.mayConnect(now: now) }).min(by: { $0.segmentStart < $1.segmentStart }) {
            return (waiting, nil)
        }
        if let segment = unassigned.first {
            let fetch = SegmentFetch(segmentStart: segment.start, position: segment.next)
            fetches[segment.start] = fetch
            return (fetch, nil)
        }
        guard isSplit, let steal = WorkStealing.steal(from: stealCandidates, minimumPiece: minimumPiece),
              let victim = table.segment(startingAt: steal.victim),
              let tail = table.split(start: steal.victim, at: SegmentTable.align(
                  steal.at, to: alignment, inside: (fetches[steal.victim]?.position ?? victim.next)..<victim.end)) else { return nil }
        let fetch = SegmentFetch(segmentStart: tail.start, position: tail.start)
        fetches[tail.start] = fetch
        return (fetch, (steal.victim, steal.at))
    }

    private var stealCandidates: [WorkStealing.Candidate] {
        fetches.values.filter { !$0.finishedReceiving }.compactMap { fetch in
            guard let segment = table.segment(startingAt: fetch.segmentStart) else { return nil }
            return WorkStealing.Candidate(
                start: fetch.segmentStart, position: fetch.position, end: segment.end,
                bytesPerSecond: fetch.measuredSpeed)
        }
    }

    /// Forgets `fetch` once its whole segment is received and written.
    func release(_ fetch: SegmentFetch) {
        guard fetch.finishedReceiving, owns(fetch), table.segment(startingAt: fetch.segmentStart)?.isComplete == true else { return }
        fetches[fetch.segmentStart] = nil
    }

    /// Ends every fetch's exchange, handing each connected handle to `disconnect` (which takes it out of the multi
    /// and cleans it up); pending back-offs lapse with the run.
    func disconnectAll(_ disconnect: (CurlEasy) -> Void) {
        for fetch in fetches.values {
            fetch.retryAt = nil
            fetch.pausedForBackpressure = false
            if let easy = fetch.easy {
                disconnect(easy)
                fetch.easy = nil
            }
            _ = fetch.endExchange()
        }
    }

    /// The run that replaces this one when the origin sent the whole file to a request for the rest of it: from
    /// zero, with the same `fetch` (earlier writes still on their way are this run's, so they no longer count).
    func restartedFromZero(with fetch: SegmentFetch) -> SegmentedDownload {
        let run = SegmentedDownload(table: .open(from: 0), validator: nil, target: 1, requestURL: requestURL)
        fetch.segmentStart = 0
        run.fetches[0] = fetch
        run.saves = SegmentSaves(savedBytes: 0, at: saves.lastSave)
        return run
    }
}
