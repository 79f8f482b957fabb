import Foundation
import Logging

/// The key that signs webhook notices (Standard Webhooks: `whsec_` followed by the key in base64).
///
/// From `--webhook-secret` / `FERRY_WEBHOOK_SECRET` when given; else kept in the spool as `webhook-secret`
/// (mode 0600, `PrivateFile`), made at the first start from 32 bytes of OpenSSL's CSPRNG and logged once, so a
/// receiver can be configured with it.
struct WebhookSecret: Sendable, Equatable {
    static let fileName = "webhook-secret"
    static let prefix = "whsec_"

    /// The HMAC key: the base64-decoded part after `whsec_`.
    let key: [UInt8]
    /// The secret as written: `whsec_...`.
    let text: String

    /// Parses `whsec_<base64>`; nil when the prefix is missing or the rest is not base64 of at least one byte.
    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix(Self.prefix), let key = Base64.decode(String(trimmed.dropFirst(Self.prefix.count))),
              !key.isEmpty else { return nil }
        self.key = key
        self.text = trimmed
    }

    init(key: [UInt8]) {
        self.key = key
        self.text = Self.prefix + Base64.encode(key)
    }

    /// The configured secret, else the one in the spool, else a new one (saved and logged).
    /// - Throws: `ServiceError.startup` when the spool's file holds something that is not a secret;
    ///   `ServiceError.system` when a new one cannot be written.
    static func resolve(configured: String?, spool: String, logger: Logger) throws -> WebhookSecret {
        if let configured {
            guard let secret = WebhookSecret(configured) else {
                throw ServiceError.startup("the webhook secret must be whsec_ followed by base64")
            }
            return secret
        }
        let path = spool + "/" + fileName
        if let text = PrivateFile.load(path) {
            guard let secret = WebhookSecret(text) else {
                throw ServiceError.startup("\(path) does not hold a whsec_ secret; delete it and Ferry makes a new one")
            }
            return secret
        }
        let secret = WebhookSecret(key: Secret.randomBytes(32))
        try PrivateFile.save(secret.text, at: path)
        logger.notice("generated the webhook signing secret \(secret.text) (kept in \(path)); receivers verify notices with it")
        return secret
    }
}
