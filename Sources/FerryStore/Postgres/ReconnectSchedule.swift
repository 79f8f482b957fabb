/// How long `PostgresListener` waits before each attempt to reconnect: `first`, doubling after every failed
/// attempt up to `longest`, and `first` again once a connection is made. A pure value.
public struct ReconnectSchedule: Sendable, Equatable {
    public var first: Duration
    public var longest: Duration

    public init(first: Duration = .milliseconds(100), longest: Duration = .seconds(5)) {
        self.first = first
        self.longest = max(first, longest)
    }

    /// The wait before attempt `failures + 1`, after `failures` attempts in a row failed (0: the connection was
    /// just lost).
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = first
        for _ in 0..<max(0, failures) {
            delay *= 2
            if delay >= longest { return longest }
        }
        return min(delay, longest)
    }
}
