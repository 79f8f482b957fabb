import Dispatch
import FerryCore

/// One job inside the engine: its spec, what the origin said about the file, and the current attempt.
///
/// Confined to the engine queue (every property is read and written there, by `DownloadEngine`). The partial file
/// belongs to `writer`, whose queue does the disk I/O. While it downloads, `segmented` holds the current run: the
/// ranges of the file and the fetches filling them (one fetch, until the file is split).
final class Transfer: @unchecked Sendable {
    /// With a proxy: the destinations of this transfer's requests resolved and checked so far, by `host:port`
    /// (`DestinationPin.key`); each request tells the proxy to connect to them.
    var pins: [String: DestinationPin] = [:]
    /// With a proxy: redirects to hosts not yet pinned, followed by Ferry (each counts as a redirect).
    var proxyHops = 0
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
    /// While the finished file waits out a back-off before it is offered to the object store again: the retry, and
    /// the file's size. A pause or shutdown then stops the transfer at once (`stop`), the file kept whole.
    var storeWait: (retry: DispatchWorkItem, size: Int64)?
    /// The finished file's SHA-256 when it was computed after `finishAhead` (the digest trails the finish) and
    /// before `.finished` was emitted: `.finished` then carries it.
    var trailingSHA256: String?
    /// `.finished` was emitted: a digest computed after it is emitted as `.digested`.
    var finishReported = false
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
    /// The current run, from the opened partial file to the finish or a stop.
    var segmented: SegmentedDownload?
    /// The origin misbehaved with ranges: use one connection for the rest of this submission.
    var singleConnectionOnly = false
    /// The job's sources (`url`, then its mirrors) with their bytes and whether dropped; empty without mirrors.
    var sources: [TransferSource]
    /// The source whose answer defined the file (length, validators): every other source must agree with it.
    var referenceSource = 0
    /// The most bytes the file may reach under the spool's quota (nil: no limit).
    var spoolLimit: Int64?
    /// The attempt failed in a way that leaves its bytes useless (checksum, quota, an FTP size that understated
    /// the file): they are deleted on giving up.
    var discardOnGiveUp = false

    /// The multipart upload its parts go to while it downloads, with an object store (`DownloadEngine+Parts`).
    let parts = LiveParts()
    /// The stored record of the job's upload was read for this submission; what was found, until the partial file is
    /// opened and it is used (`takeOver`).
    var partsLoaded = false
    var storedParts: ObjectUploadRecord?

    // Counters over the whole submission.
    var failures = 0
    var restartsInARow = 0
    var retryWork: DispatchWorkItem?
    /// Its own speed limit (`spec.maxBytesPerSecond`), shared by all its connections; nil when unlimited.
    var rateBucket: TokenBucket?
    /// Called once with the bytes on disk when the transfer stops (or with nil when it ends another way).
    var stopObservers: [@Sendable (Int64?) -> Void] = []

    /// When the last progress event went out (monotonic seconds).
    var lastReportTime: Double = 0

    init(spec: TransferSpec, writer: FileWriter) {
        self.spec = spec
        self.writer = writer
        etag = spec.resume?.etag
        lastModified = spec.resume?.lastModified
        bytesExpected = spec.resume?.bytesExpected
        finalURL = spec.resume?.finalURL
        sources = spec.sources
        referenceSource = sources.firstIndex(where: \.isActive) ?? 0
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

    /// How the engine speaks to the source (by its URL's scheme).
    var source: SourceProtocol { SourceProtocol(scheme: url.scheme) }

    /// Whether the bytes on disk can be continued safely: HTTP needs an `If-Range` validator; FTP and SFTP need the
    /// file's size recorded with them (`ResumeDecision.decideByOffset`).
    var canValidateResume: Bool { source.dialect == .http ? ifRangeValidator != nil : bytesExpected != nil }

    /// The `If-Range` value: a strong ETag, else Last-Modified; nil when neither can validate a resume.
    var ifRangeValidator: String? { Self.ifRangeValidator(etag: etag, lastModified: lastModified) }

    static func ifRangeValidator(etag: String?, lastModified: String?) -> String? {
        if let etag, !etag.hasPrefix("W/"), etag.hasPrefix("\"") { return etag }
        return lastModified
    }

    /// Bytes of the file received so far in the current run, over all connections.
    var bytesReceived: Int64 { segmented?.bytesReceived ?? 0 }

    /// Whether it is downloading now.
    var isTransferring: Bool { phase == .running && segmented != nil }

    /// The run `fetch` works for, while the transfer runs it.
    func run(of fetch: SegmentFetch) -> SegmentedDownload? {
        guard phase == .running, let run = segmented, run.owns(fetch) else { return nil }
        return run
    }

    /// Connections to its host it holds: its scheduling slot while active (one), or each connected fetch.
    var connectionsInUse: Int {
        switch phase {
        case .opening, .running, .finishing: return max(1, segmented?.connectedCount ?? 1)
        case .queued, .retryWait, .diskWait, .stopping: return 0
        }
    }
}
