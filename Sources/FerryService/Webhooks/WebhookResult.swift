/// What one try of a webhook notice came to, as `/metrics` counts it (`ferry_webhook_notices_total{result}`).
enum WebhookResult: String, CaseIterable, Sendable {
    /// The receiver answered 2xx: the notice is done.
    case delivered
    /// Another answer or no answer: tried again later.
    case retried
    /// Given up: 24 hours passed, or the destination guard refused the receiver.
    case failed
    /// The receiver answered 410: no more tries.
    case gone
}
