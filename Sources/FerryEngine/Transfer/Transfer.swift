import Dispatch
import FerryCore

/// One job inside the engine: its spec, what the origin said about the file, and the current attempt.
///
/// Confined to the engine queue (every property is read and written there, by `DownloadEngine`). The partial file
/// belongs to `writer`, whose queue does the disk I/O. A transfer downloads over one connection (the attempt
/// state below) until the first response shows that the file can be split; from then on `segmented` holds the
/// ranges and the connections filling them, and the single-attempt state is unused.
final class Transfer: PacedConnection, @unchecked Sendable {
    /// Where the transfer is in its life.
    enum Phase: Equatable {
        /// In the scheduling queue, behind the limits.
        case queued
        /// The writer is opening (and, on resume, hashing) the partial file.
        case opening
        /// Its easy handle is in the multi.
        case running
        /// The body is complete: syncing, verifying and moving the file.
        case finishing
        /// Waiting out a back-off.
        case retryWait
        /// Waiting for free space.
        case diskWait
        /// Its writer is closing; `stopIntent` (or the pending failure) says what comes next.
        case stopping
    }

    /// Why a transfer is being stopped from outside.
    enum StopIntent: Equatable {
        case pause, cancel, shutdown, diskFull
    }

    var spec: TransferSpec
    let writer: FileWriter
    var phase: Phase = .queued
    var stopIntent: StopIntent?
    /// A submit for the same id that arrived while this transfer was stopping.
    var pendingResubmit: TransferSpec?

    // What is known about the file (from the resume validators, then from accepted responses).
    var etag: String?
    var lastModified: String?
    var bytesExpected: Int64?
    var finalURL: String?
    var filename: String?
    var contentType: String?
    /// True once a response was accepted in this run: later attempts continue from the bytes on disk.
    var hasAcceptedResponse = false
    /// The next attempt starts from zero (the bytes on disk are discarded).
    var discardOnNextStart = false
    /// Present while the transfer downloads over several connections.
    var segmented: SegmentedDownload?
    /// The origin misbehaved with ranges: use one connection for the rest of this submission.
    var singleConnectionOnly = false
    /// The most bytes the file may reach under the spool's quota (nil: no limit).
    var spoolLimit: Int64?
    /// The attempt failed in a way that leaves its bytes useless (checksum, quota): they are deleted on giving up.
    var discardOnGiveUp = false

    // Counters over the whole submission.
    var failures = 0
    var restartsInARow = 0
    var retryWork: DispatchWorkItem?
    /// Its own speed limit (`spec.maxBytesPerSecond`), shared by all its connections; nil when unlimited.
    var rateBucket: TokenBucket?
    /// Called once with the bytes on disk when the transfer stops (or with nil when it ends another way).
    var stopObservers: [@Sendable (Int64?) -> Void] = []

    // The current attempt.
    var easy: CurlEasy?
    var requestOffset: Int64 = 0
    /// Offset of the next body byte: bytes of the file received so far, including the resume offset.
    var writeOffset: Int64 = 0
    var headReader = ResponseHeadReader()
    var head: ResponseHead? { headReader.head }
    var decision: ResumeDecision?
    var retryAfter: Double?
    var abortCause: FailureCause?
    var restartReason: String?
    var refusal: String?
    var writeFailure: SystemError?
    var pendingWriteBytes = 0
    var pausedForBackpressure = false
    var waitingForRate = false
    var appliedLowSpeedFloor = -1

    // Progress sampling.
    var meter = SpeedMeter()
    var lastReportedBytes: Int64 = -1
    var lastReportTime: Double = 0

    init(spec: TransferSpec, writer: FileWriter) {
        self.spec = spec
        self.writer = writer
        etag = spec.resume?.etag
        lastModified = spec.resume?.lastModified
        bytesExpected = spec.resume?.bytesExpected
        finalURL = spec.resume?.finalURL
    }

    var id: String { spec.id }
    var url: SubmittedURL { spec.url }

    /// The host for the per-host limit.
    var host: String {
        switch url.host {
        case .domain(let name): return name
        case .ipv4(let address), .ipv6(let address): return address.description
        }
    }

    /// The `If-Range` value: a strong ETag, else Last-Modified; nil when neither can validate a resume.
    var ifRangeValidator: String? { Self.ifRangeValidator(etag: etag, lastModified: lastModified) }

    static func ifRangeValidator(etag: String?, lastModified: String?) -> String? {
        if let etag, !etag.hasPrefix("W/"), etag.hasPrefix("\"") { return etag }
        return lastModified
    }

    /// Bytes of the file received so far, over all connections.
    var bytesReceived: Int64 { segmented?.bytesReceived ?? writeOffset }

    /// Whether it is downloading now (an exchange, or segments, in the multi).
    var isTransferring: Bool { phase == .running && (easy != nil || segmented != nil) }

    /// Connections to its host it holds: its scheduling slot while active (one), or each connected segment.
    var connectionsInUse: Int {
        switch phase {
        case .opening, .running, .finishing: return max(1, segmented?.connectedCount ?? 1)
        case .queued, .retryWait, .diskWait, .stopping: return 0
        }
    }

    /// Forgets the current attempt's per-response state before a new request.
    func resetAttempt(offset: Int64) {
        requestOffset = offset
        writeOffset = offset
        headReader = ResponseHeadReader()
        decision = nil
        retryAfter = nil
        abortCause = nil
        restartReason = nil
        refusal = nil
        writeFailure = nil
        pendingWriteBytes = 0
        pausedForBackpressure = false
        waitingForRate = false
        appliedLowSpeedFloor = -1
        meter = SpeedMeter()
        lastReportedBytes = -1
    }
}
