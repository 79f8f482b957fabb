import FerryHTTP
import FerryStore
import Foundation

/// A create request's `Idempotency-Key` and fingerprint, and how its answer becomes the record that
/// replays it. Answers of 500 and above are not recorded (a retry should try again).
struct IdempotencyIntent: Sendable {
    let key: String
    let fingerprint: String
    let request: HTTPRequest

    func record(for response: HTTPResponse) -> IdempotencyRecord? {
        guard case .bytes(let body) = response.body, response.status.code < 500 else { return nil }
        return IdempotencyRecord(key: key, requestHash: fingerprint, status: response.status.code, body: body,
                                 createdAt: Date())
    }
}
