import Dispatch
import FerryCore

/// One delivery inside the engine: its spec, the open file it reads, the current attempt's exchange, and its
/// retries. Confined to the engine queue, like a `Transfer`.
final class Upload: @unchecked Sendable {
    /// With a proxy: the target's checked address, resolved before the first attempt.
    var pin: DestinationPin?
    let spec: DeliverySpec
    /// The finished file, open for reading while an attempt runs (-1 otherwise).
    var fd: Int32 = -1
    var easy: CurlEasy?
    /// Bytes of the file handed to libcurl in this attempt.
    var bytesSent: Int64 = 0
    /// What of the file the kernel was asked to read ahead in this attempt.
    var readAhead = ReadAhead()
    var headReader = ResponseHeadReader()
    /// Set when the destination guard refused an address, or the file could not be read.
    var cause: FailureCause?
    /// Aborted because the node may no longer act for the job (`ObjectUploadLedger.mayAct`): ends without an event.
    var fenced = false
    /// Failed attempts so far.
    var failures = 0
    /// The pending retry after a back-off.
    var retryWork: DispatchWorkItem?
    /// Its own speed limit (the job's `maxBytesPerSecond`); nil when unlimited.
    var rateBucket: TokenBucket?
    /// Paused by a speed limit; a wake-up is scheduled.
    var waitingForRate = false
    var meter = SpeedMeter()
    var lastReportTime: Double = 0

    init(spec: DeliverySpec) {
        self.spec = spec
    }

    var id: String { spec.id }

    /// Forgets the previous attempt before a new one from the first byte, started at `now`.
    func beginAttempt(at now: Double) {
        bytesSent = 0
        headReader = ResponseHeadReader()
        cause = nil
        waitingForRate = false
        meter = SpeedMeter()
        meter.record(totalBytes: 0, at: now)
    }

    var progress: DeliveryProgress {
        let remaining = max(0, spec.size - bytesSent)
        return DeliveryProgress(bytesSent: bytesSent, bytesTotal: spec.size, bytesPerSecond: meter.bytesPerSecond,
                                eta: meter.eta(remaining: remaining))
    }
}
