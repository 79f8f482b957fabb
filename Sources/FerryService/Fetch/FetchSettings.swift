import FerryCore

/// Fetch-through's settings (API.md, "Fetch-through"; `ServiceConfiguration.fetch`): the origins it may reach, how
/// long an entry is fresh without the origin saying, how long a stale one may be served when the origin is down, and
/// the cache key's rule (shared with job dedupe).
///
/// Pure value, fixed at start-up.
public struct FetchSettings: Sendable, Equatable {
    /// `--fetch-allow`; empty: fetch-through is off.
    var allow = FetchAllowList()
    /// `--fetch-max-age` in seconds (1 h).
    public var maxAge: Double = 3600
    /// `--fetch-stale-if-error` in seconds (1 d).
    public var staleIfError: Double = 86_400
    /// `--cache-key-ignore` names, with the signing parameters.
    public var keyRule: CacheKeyRule = .standard

    public init() {}

    /// Whether fetch-through answers at all.
    public var isOn: Bool { !allow.isEmpty }
}
