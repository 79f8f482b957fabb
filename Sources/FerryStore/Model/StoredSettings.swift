/// Settings of the running service changed through the API (`PATCH /api/v1/settings`), kept across restarts.
///
/// A field is nil when it was never changed that way (the `ferry serve` flag, or its default, applies);
/// `maxBytesPerSecond` is `.some(nil)` when "no limit" was chosen explicitly.
public struct StoredSettings: Sendable, Equatable {
    /// The speed limit over all downloads together, bytes per second; `.some(nil)`: none.
    public var maxBytesPerSecond: Int64??
    /// Downloads running at once.
    public var maxConcurrent: Int?

    public init(maxBytesPerSecond: Int64?? = nil, maxConcurrent: Int? = nil) {
        self.maxBytesPerSecond = maxBytesPerSecond
        self.maxConcurrent = maxConcurrent
    }

    /// Whether nothing was ever saved.
    public var isEmpty: Bool { maxBytesPerSecond == nil && maxConcurrent == nil }

    /// These settings with the fields `change` sets replaced.
    public func merging(_ change: StoredSettings) -> StoredSettings {
        var merged = self
        if let rate = change.maxBytesPerSecond { merged.maxBytesPerSecond = .some(rate) }
        if let concurrent = change.maxConcurrent { merged.maxConcurrent = concurrent }
        return merged
    }
}
