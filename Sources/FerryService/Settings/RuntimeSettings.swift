import FerryStore

/// The settings of the running service that `GET`/`PATCH /api/v1/settings` show and change: the speed limit over all
/// downloads together and how many run at once. A plain value.
///
/// Where the values come from at start (`starting(flags:stored:)`): a setting changed through the API is kept in the
/// store and wins, at every later start, over `--max-bytes-per-second` / `--max-concurrent` (and their variables);
/// a setting never changed that way follows the flag, or its default.
struct RuntimeSettings: Sendable, Equatable {
    /// Bytes per second over all downloads together; nil: no limit.
    var maxBytesPerSecond: Int64?
    /// Downloads running at once.
    var maxConcurrent: Int

    /// What `maxConcurrent` may be, through a flag or the API.
    static let maxConcurrentRange = 1...1024

    /// The flags' values overridden by the fields the store kept.
    static func starting(flags: RuntimeSettings, stored: StoredSettings) -> RuntimeSettings {
        var settings = flags
        if let rate = stored.maxBytesPerSecond { settings.maxBytesPerSecond = rate }
        if let concurrent = stored.maxConcurrent { settings.maxConcurrent = concurrent }
        return settings
    }

    /// These settings with the fields of `change` replaced.
    func applying(_ change: StoredSettings) -> RuntimeSettings {
        Self.starting(flags: self, stored: change)
    }
}
