/// A speed limit as a token bucket: bytes may pass while the balance is positive, and the balance refills at the
/// limit's rate up to a small burst.
///
/// The engine asks before it takes a chunk from libcurl (`mayPass(now:)`), takes the chunk's bytes (`take(_:now:)`,
/// which may leave the balance negative: that debt is repaid before anything else passes), and when it may not,
/// pauses the connection and wakes it after `delay(now:)`. Over any window the bytes passed stay within
/// `rate × window + burst + make-up + one chunk per connection`, so small chunks and a small burst make a limit hold
/// closely over short windows, with no stall longer than a chunk's worth of time. A wake-up that comes late (a busy
/// machine) does not lower the rate: the time a debtor waited past its due moment is made up, up to
/// `makeUpSeconds`; idle time saves only the burst. Pure: the clock is passed in (seconds, monotonic).
public struct TokenBucket: Sendable, Equatable {
    /// Bytes per second.
    public private(set) var rate: Double
    /// Seconds of the rate the balance may save up while nothing is asked.
    public let burstSeconds: Double
    /// Seconds of lateness past a debt's due moment that are made up (a paused connection woken late).
    public static let makeUpSeconds = 0.1
    private var balance: Double
    private var updated: Double

    /// A bucket that starts with a full (small) burst at `now`.
    public init(bytesPerSecond: Int64, now: Double, burstSeconds: Double = 0.05) {
        rate = Double(max(1, bytesPerSecond))
        self.burstSeconds = burstSeconds
        balance = rate * burstSeconds
        updated = now
    }

    /// Whether the next chunk may pass now.
    public mutating func mayPass(now: Double) -> Bool {
        refill(now)
        return balance > 0
    }

    /// Takes the bytes of a chunk that passed.
    public mutating func take(_ bytes: Int, now: Double) {
        refill(now)
        balance -= Double(bytes)
    }

    /// Seconds until the next chunk may pass (0 when it may now).
    public func delay(now: Double) -> Double {
        let current = balance + max(0, now - updated) * rate
        return current > 0 ? 0 : (-current / rate) + 1e-3
    }

    /// Changes the rate from now on, keeping what was saved or owed.
    public mutating func setRate(_ bytesPerSecond: Int64, now: Double) {
        refill(now)
        rate = Double(max(1, bytesPerSecond))
        balance = min(balance, rate * burstSeconds)
    }

    private mutating func refill(_ now: Double) {
        guard now > updated else { return }
        var cap = rate * burstSeconds
        if balance < 0 {
            // A debtor waited until `repaid`: time past that moment was lost to a late wake-up, not to idleness.
            let repaid = updated + -balance / rate
            cap += rate * min(Self.makeUpSeconds, max(0, now - repaid))
        }
        // What the balance already holds (a make-up not spent yet) stays: the cap limits only what refilling adds.
        balance = max(balance, min(cap, balance + (now - updated) * rate))
        updated = now
    }
}
