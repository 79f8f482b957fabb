import FerryCore
/// What the service asks the engine to download.
public struct TransferSpec: Sendable {
    /// The job id; also names the partial file (`partial/<id>.part`).
    public var id: String
    /// The URL, parsed and checked once by the service; its normalized form (with any userinfo) is what libcurl
    /// gets, its redacted form what is shown.
    public var url: SubmittedURL
    /// Extra request headers for the origin. `Host`, `Range`, `Content-Length`, `Transfer-Encoding` and hop-by-hop
    /// headers are dropped (`RequestHeaderFilter`).
    public var headers: [(name: String, value: String)]
    /// The job's file name in `files/`, already reserved for it (`reserveFilename`, or claimed in recovery); nil
    /// until known, when the engine reserves one from the first response (`Content-Disposition`, else the final URL).
    public var filename: String?
    /// The digest the whole file must have (computed as the bytes arrive, with its SHA-256); a mismatch fails with
    /// `checksum_mismatch`.
    public var checksum: Checksum?
    /// Speed limit for this transfer, bytes per second (for a segmented download, shared by its connections).
    public var maxBytesPerSecond: Int64?
    /// Parallel connections (ranges) for this file, 1-16 (clamped); nil lets the engine choose
    /// (`EngineConfiguration.defaultConnections` for files of at least `segmentationThreshold` bytes, else one).
    /// More than one applies only when the origin serves byte ranges and says the length.
    public var connections: Int?
    /// Higher starts first.
    public var priority: Int
    /// Submission order among equal priorities (the store's sequence).
    public var sequence: Int64
    /// Attempts already made before this submission (informational; the retry budget counts failures of this
    /// submission).
    public var attempts: Int
    /// The job's sources when it has mirrors: `url`'s own first (its `url` is `url`), then each mirror, with what
    /// earlier runs recorded (bytes, dropped). Empty for a job without mirrors: `url` is then the only source.
    public var sources: [TransferSource]
    /// Present when bytes may already be on disk from an earlier run: continue from them if the origin's
    /// validators still match.
    public var resume: ResumeValidators?
    /// The file's SHA-256 must be known before `.finished` (as it must be when `checksum` is set): the service
    /// asks this for a job with a delivery. Otherwise `.finished` may come without it, and `.digested` follows.
    public var digestBeforeFinish = false
    /// Clients read the file while it downloads (fetch-through streams every miss): it is written through the page
    /// cache, where they read it, never with direct I/O (see `FileWriter`).
    public var readWhileWritten = false
    /// The group whose turn it takes for a slot (the job's API key; nil: the administrator's), see `SchedulingQueue`.
    public var group: String?

    public init(
        id: String, url: SubmittedURL, headers: [(name: String, value: String)] = [], filename: String? = nil,
        checksum: Checksum? = nil, maxBytesPerSecond: Int64? = nil, connections: Int? = nil, priority: Int = 0,
        sequence: Int64 = 0, attempts: Int = 0, resume: ResumeValidators? = nil, sources: [TransferSource] = []
    ) {
        self.id = id
        self.url = url
        self.headers = headers
        self.filename = filename
        self.checksum = checksum
        self.maxBytesPerSecond = maxBytesPerSecond
        self.connections = connections
        self.priority = priority
        self.sequence = sequence
        self.attempts = attempts
        self.resume = resume
        self.sources = sources
    }
}

