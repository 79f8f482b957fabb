import Dispatch
import FerryCore

/// One connection's work on one segment of a segmented download: the current HTTP exchange for the bytes from
/// `position` to the segment's end, and the retries of that segment.
///
/// Confined to the engine queue, like the `Transfer` it belongs to. A fetch lives from the moment its segment is
/// assigned to a connection until the segment's bytes have all been received (or the download stops); a retry
/// reuses the fetch with a fresh exchange.
final class SegmentFetch: PacedConnection, @unchecked Sendable {
    /// The segment it fills (the segment's first byte, its name in the `SegmentTable`).
    let segmentStart: Int64

    // The current exchange.
    var easy: CurlEasy?
    /// The bytes asked for: `[requestStart, requestEnd)`. The first exchange of a download asks for the whole
    /// rest of the file and is cut at its segment's end.
    var requestStart: Int64 = 0
    var requestEnd: Int64 = 0
    /// The next byte to receive: every byte before it was handed to the writer.
    var position: Int64
    var headReader = ResponseHeadReader()
    var head: ResponseHead? { headReader.head }
    /// The response was judged usable: body bytes are written.
    var accepted = false
    /// The response is an error status: its body is discarded.
    var httpStatus: Int?
    var retryAfter: Double?
    /// Why the whole download must start again from zero (and whether with one connection only).
    var restart: (reason: String, singleConnection: Bool)?
    var refusal: String?
    /// The segment's end was reached and the exchange cut there on purpose.
    var reachedEnd = false
    /// Every byte of the segment was received; the fetch stays assigned until the writer confirms them.
    var finishedReceiving = false
    var pausedForBackpressure = false
    var waitingForRate = false
    var appliedLowSpeedFloor = -1
    var meter = SpeedMeter()
    /// Samples in `meter` (taken by the engine's ticker): the speed means something after a few.
    var speedSamples = 0

    // Across exchanges.
    /// Failed exchanges of this segment in a row.
    var failures = 0
    /// The pending retry after a back-off.
    var retryWork: DispatchWorkItem?

    init(segmentStart: Int64, position: Int64) {
        self.segmentStart = segmentStart
        self.position = position
    }

    /// Forgets the previous exchange before a new request for `[position, end)` sent at `now` (monotonic seconds;
    /// the speed is measured from then, so a burst that arrives before the first tick still counts).
    func beginExchange(end: Int64, at now: Double) {
        requestStart = position
        requestEnd = end
        headReader = ResponseHeadReader()
        accepted = false
        httpStatus = nil
        retryAfter = nil
        restart = nil
        refusal = nil
        reachedEnd = false
        pausedForBackpressure = false
        waitingForRate = false
        appliedLowSpeedFloor = -1
        meter = SpeedMeter()
        meter.record(totalBytes: position, at: now)
        speedSamples = 1
    }

    /// The speed for work stealing: measured over at least three ticks, 0 while not connected.
    var measuredSpeed: Double? {
        guard isConnected else { return 0 }
        return speedSamples >= 3 ? meter.bytesPerSecond : nil
    }

    /// Whether an exchange is in the multi.
    var isConnected: Bool { easy != nil }
}

