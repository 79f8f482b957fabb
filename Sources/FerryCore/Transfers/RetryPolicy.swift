/// Exponential back-off with jitter between attempts of one transfer, honouring `Retry-After`.
///
/// The delay after attempt *n* (1 after the first failure) is `baseDelay × 2^(n-1)`, capped at `maxDelay`,
/// then multiplied by `0.5 + jitter/2` ("equal jitter": between half and all of the exponential value, so
/// retries from many jobs spread out while none retries immediately). When the origin sent `Retry-After`,
/// the delay is at least that long, but never more than one hour, so a hostile or broken origin cannot park
/// a job for days. A value type: the engine keeps one copy in its configuration.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in total, the first included; at least 1 is assumed.
    public var maxAttempts: Int = 5
    /// Seconds before the second attempt (before jitter).
    public var baseDelay: Double = 1
    /// Upper bound of the exponential part, in seconds.
    public var maxDelay: Double = 60

    /// The longest delay a `Retry-After` header can impose, in seconds.
    public static let retryAfterCeiling: Double = 3600

    /// A policy; the defaults give 5 attempts waiting about 1, 2, 4 and 8 seconds (halved at most by jitter).
    public init(maxAttempts: Int = 5, baseDelay: Double = 1, maxDelay: Double = 60) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// Seconds to wait before the next attempt.
    /// - Parameters:
    ///   - attempt: attempts already made (1 after the first failure); values below 1 count as 1.
    ///   - retryAfter: the origin's `Retry-After` in seconds, if any; negative or non-finite values are ignored.
    ///   - jitter: a random number in 0...1 (injected so tests are deterministic); clamped to that range.
    public func delay(afterAttempt attempt: Int, retryAfter: Double?, jitter: Double) -> Double {
        let exponent = max(attempt, 1) - 1
        let base = max(baseDelay, 0)
        let cap = max(maxDelay, 0)
        // 2^exponent overflows Double around 1024; anything past 2^62 is far beyond any cap anyway.
        let exponential = exponent >= 62 ? cap : min(base * Double(UInt64(1) << UInt64(exponent)), cap)
        let spread = jitter.isNaN ? 0.5 : min(max(jitter, 0), 1)
        let delay = exponential * (0.5 + spread / 2)
        guard let retryAfter, retryAfter.isFinite, retryAfter >= 0 else { return delay }
        return min(max(retryAfter, delay), RetryPolicy.retryAfterCeiling)
    }

    /// Whether another attempt is allowed after `attempt` attempts.
    public func shouldRetry(afterAttempt attempt: Int) -> Bool {
        attempt < maxAttempts
    }
}
