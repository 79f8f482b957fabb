import Foundation

/// When a webhook notice is tried again, and when it is given up (API.md, "Webhooks"). Pure: the caller gives
/// the clock.
///
/// A 2xx answer delivers; `410` stops at once; any other answer, or none, is retried after `base` seconds, then
/// twice that, doubling up to `maxDelay`, for `lifetime` seconds from the notice's creation: a retry that would
/// fall after that is not scheduled and the notice fails.
struct WebhookSchedule: Sendable, Equatable {
    /// What one try got back.
    enum Answer: Sendable, Equatable {
        case status(Int)
        /// No answer: DNS, connection, TLS or timeout.
        case none
        /// The destination guard refused every address: trying again cannot help.
        case refused
    }

    /// What to do with the notice after a try.
    enum Verdict: Sendable, Equatable {
        case delivered
        case gone
        case retry(at: Date)
        /// Given up: retries exhausted or refused.
        case failed
    }

    /// Seconds before the first retry (5 in production; `FERRY_WEBHOOK_RETRY_BASE` shortens it for tests).
    var base: Double = 5
    /// Longest wait between two tries.
    var maxDelay: Double = 3600
    /// Seconds from creation after which no try is made.
    var lifetime: Double = 86_400

    /// Seconds to wait after the `attempt`-th try failed (1-based): `base`, `2·base`, `4·base`, ... at most `maxDelay`.
    func delay(afterAttempt attempt: Int) -> Double {
        let doublings = max(0, attempt - 1)
        // 2^31 · base is far beyond any cap: stop doubling there instead of overflowing.
        return min(maxDelay, base * pow(2, Double(min(doublings, 31))))
    }

    /// The verdict on the `attempt`-th try (1-based) of a notice made at `createdAt`, which got `answer` at `now`.
    func verdict(_ answer: Answer, attempt: Int, createdAt: Date, now: Date) -> Verdict {
        switch answer {
        case .status(let code) where (200...299).contains(code): return .delivered
        case .status(410): return .gone
        case .refused: return .failed
        case .status, .none:
            let next = now.addingTimeInterval(delay(afterAttempt: attempt))
            return next <= createdAt.addingTimeInterval(lifetime) ? .retry(at: next) : .failed
        }
    }
}
