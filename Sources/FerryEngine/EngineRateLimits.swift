import FerryCore

/// The speed limits above single transfers (see `DownloadEngine+Pacing`).
///
/// Owner: `DownloadEngine.queue`.
struct EngineRateLimits {
    /// The limit shared by every transfer (`globalMaxBytesPerSecond`).
    var global: TokenBucket?
    /// The limits of groups (an API key's `maxBytesPerSecond`, shared by its transfers).
    var groups: [String: TokenBucket] = [:]
    /// A limit was lifted: the next `applyRateLimits` puts the low-speed floors it had lowered back.
    var floorsStale = false
}
