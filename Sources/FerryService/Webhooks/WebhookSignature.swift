/// Standard Webhooks signing: `v1,` + base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>"), with libcrypto's HMAC.
enum WebhookSignature {
    static func sign(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> String {
        let message = Array("\(id).\(timestamp).".utf8) + body
        return "v1," + Base64.encode(Secret.hmacSHA256(key: key, message: message))
    }

    /// The header lines of a notice: `webhook-id`, `webhook-timestamp`, `webhook-signature`, `Content-Type`.
    static func headers(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> [String] {
        [
            "Content-Type: application/json",
            "webhook-id: \(id)",
            "webhook-timestamp: \(timestamp)",
            "webhook-signature: \(sign(id: id, timestamp: timestamp, body: body, key: key))",
        ]
    }
}
