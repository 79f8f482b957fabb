/// The running service's settings (`GET`/`PATCH /api/v1/settings`): the speed limit over all downloads together and
/// how many run at once.
public struct ServiceSettings: Decodable, Sendable, Equatable {
    /// Bytes per second over all downloads; nil: no limit.
    public var maxBytesPerSecond: Int64?
    public var maxConcurrent: Int

    /// Two lines for people: `speed limit  5 MiB/s (5242880 bytes per second)` and `at once      4`.
    public var lines: [String] {
        let limit = maxBytesPerSecond.map { "\(HumanUnits.speed(Double($0))) (\($0) bytes per second)" } ?? "none"
        return ["speed limit  \(limit)", "at once      \(maxConcurrent)"]
    }
}
