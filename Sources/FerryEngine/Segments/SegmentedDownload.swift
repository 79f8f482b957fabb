import Dispatch
import FerryCore

/// The segmented state of one transfer: the table of ranges, the fetches filling them, and the bookkeeping for
/// saving the table.
///
/// Confined to the engine queue. Replaced by a fresh instance whenever the download starts again from zero, so
/// late completions of the old one are recognised (`transfer.segmented !== self`) and ignored.
final class SegmentedDownload: @unchecked Sendable {
    /// What has been written where; updated only when the writer confirms a write.
    var table: SegmentTable
    /// The `If-Range` value every segment request carries.
    let validator: String
    /// Connections wanted.
    var target: Int
    /// The URL segment requests go to: the first exchange's URL after redirects (so every segment reaches the
    /// same server), or the transfer's URL when resuming or after a URL change.
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
    /// The written byte count of the last saved (or saving) table, the time of that save, and whether it runs.
    var savedBytes: Int64 = -1
    var lastSave: Double = 0
    var saving = false

    init(table: SegmentTable, validator: String, target: Int, requestURL: String) {
        self.table = table
        self.validator = validator
        self.target = max(1, target)
        self.requestURL = requestURL
        self.startBytes = table.bytesWritten
        self.bytesReceived = table.bytesWritten
    }

    var sidecar: SegmentSidecar { SegmentSidecar(validator: validator, table: table) }

    /// Fetches with an exchange in the multi.
    var connectedCount: Int { fetches.values.filter(\.isConnected).count }

    /// Fetches that still have bytes to receive (connected, or waiting to retry).
    var busyCount: Int { fetches.values.filter { !$0.finishedReceiving }.count }

    /// Incomplete segments no fetch is assigned to, lowest first.
    var unassigned: [SegmentTable.Segment] {
        table.segments.filter { !$0.isComplete && fetches[$0.start] == nil }
    }
}
