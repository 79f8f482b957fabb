/// An API key's limits (API.md, "API keys"), each nil for none: the store keeps them (`APIKeyRecord.Limits`), the
/// API takes and shows them, and the client reads them (`APIKey.Limits`). A plain value.
public struct KeyLimits: Sendable, Equatable, Codable {
    /// Jobs of this key running at once; more wait.
    public var maxActiveJobs: Int64?
    /// Jobs of this key stored; a new one over it is refused.
    public var maxJobs: Int64?
    /// All its transfers together, bytes per second.
    public var maxBytesPerSecond: Int64?
    /// Bytes fetched in a rolling 24 hours.
    public var bytesPerDay: Int64?
    /// Its finished and partial files together, bytes.
    public var spoolBytes: Int64?

    public init(maxActiveJobs: Int64? = nil, maxJobs: Int64? = nil, maxBytesPerSecond: Int64? = nil,
                bytesPerDay: Int64? = nil, spoolBytes: Int64? = nil) {
        self.maxActiveJobs = maxActiveJobs
        self.maxJobs = maxJobs
        self.maxBytesPerSecond = maxBytesPerSecond
        self.bytesPerDay = bytesPerDay
        self.spoolBytes = spoolBytes
    }
}
