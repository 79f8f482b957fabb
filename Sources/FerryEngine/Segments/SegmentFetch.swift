import FerryCore

/// One connection's work on one segment of a download: the current HTTP exchange for the bytes from `position` to
/// the segment's end, its easy handle, its pacing, and the retries of that segment.
///
/// Confined to the engine queue, like the `Transfer` it belongs to. A fetch lives from the moment its segment is
/// assigned to a connection until the segment's bytes have all been received (or the download stops); a retry
/// reuses the fetch with a fresh exchange. What a response means is decided by its `Exchange` (pure); the fetch
/// holds what the driver needs around it.
final class SegmentFetch: @unchecked Sendable {
    /// With a proxy: the status and `Location` of the response head being read (`DownloadEngine.watchHop`).
    var hopStatus: Int?
    var hopLocation: String?
    /// With a proxy: a redirect to a host not yet pinned; the exchange was stopped there to pin it first.
    var redirectToPin: String?
    /// The segment it fills (the segment's first byte, its name in the `SegmentTable`). Moves to 0 only when the
    /// first exchange's answer replaces the bytes on disk with the whole file.
    var segmentStart: Int64
    /// The source it asks (an index in `Transfer.sources`; 0 for a job without mirrors).
    var source = 0
    /// The current exchange; nil between exchanges.
    var exchange: Exchange?
    var easy: CurlEasy?
    /// Where the next exchange starts: every byte before it was handed to the writer.
    private var restingPosition: Int64
    /// Every byte of the segment was received; the fetch stays assigned until the writer confirms them.
    var finishedReceiving = false
    /// Failed exchanges of this segment in a row.
    var failures = 0
    /// Monotonic time before which it must not reconnect (a retry's back-off); nil when it may.
    var retryAt: Double?

    // Pacing of the current exchange.
    var pausedForBackpressure = false
    /// Paused by a speed limit; a wake-up is scheduled.
    var waitingForRate = false
    /// The `CURLOPT_LOW_SPEED_LIMIT` last set on its exchange (-1: not yet).
    var appliedLowSpeedFloor = -1
    var meter = SpeedMeter()
    /// Samples in `meter` (taken by the engine's ticker): the speed means something after a few.
    var speedSamples = 0

    init(segmentStart: Int64, position: Int64) {
        self.segmentStart = segmentStart
        self.restingPosition = position
    }

    /// The next byte to receive.
    var position: Int64 { exchange?.position ?? restingPosition }

    /// Starts `exchange` at `now` (monotonic seconds; the speed is measured from then, so a burst that arrives
    /// before the first tick still counts).
    func begin(_ exchange: Exchange, at now: Double) {
        self.exchange = exchange
        pausedForBackpressure = false
        waitingForRate = false
        appliedLowSpeedFloor = -1
        meter = SpeedMeter()
        meter.record(totalBytes: exchange.position, at: now)
        speedSamples = 1
    }

    /// Ends the current exchange, keeping where it got to; returns it.
    func endExchange() -> Exchange? {
        guard let exchange else { return nil }
        restingPosition = exchange.position
        self.exchange = nil
        return exchange
    }

    /// The speed for work stealing: measured over at least three ticks, 0 while not connected.
    var measuredSpeed: Double? {
        guard isConnected else { return 0 }
        return speedSamples >= 3 ? meter.bytesPerSecond : nil
    }

    /// Whether an exchange is in the multi.
    var isConnected: Bool { easy != nil }

    /// Whether it waits for a connection and may have one at `now` (its back-off, if any, is over).
    func mayConnect(now: Double) -> Bool {
        !isConnected && !finishedReceiving && (retryAt ?? 0) <= now
    }
}
