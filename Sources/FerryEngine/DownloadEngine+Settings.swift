import Dispatch
import FerryCore

/// Settings of the running service that reach the engine at runtime (`PATCH /api/v1/settings`). Each hops onto
/// `queue`, like every other public method; `setMaxConcurrent` is the other one.
extension DownloadEngine {
    /// Sets (`bytesPerSecond` > 0) or clears (nil) the speed limit shared by every transfer, also while they run.
    /// The shared bucket keeps what it saved or owes when only the rate changes, as a transfer's own does
    /// (`setRateLimit`); each running connection's low-speed floor follows the new share (`applyRateLimits`).
    public func setGlobalMaxBytesPerSecond(_ bytesPerSecond: Int64?) {
        queue.async {
            let limit = bytesPerSecond.flatMap { $0 > 0 ? $0 : nil }
            self.configuration.globalMaxBytesPerSecond = limit
            if let limit {
                let now = Self.monotonicSeconds()
                if self.rates.global != nil {
                    self.rates.global?.setRate(limit, now: now)
                } else {
                    self.rates.global = TokenBucket(bytesPerSecond: limit, now: now)
                }
            } else {
                if self.rates.global != nil { self.rates.floorsStale = true }
                self.rates.global = nil
            }
            self.applyRateLimits()
        }
    }
}
