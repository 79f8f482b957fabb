import FerryStore
import Foundation
import Logging

/// The key that signs webhook notices (Standard Webhooks: `whsec_` followed by the key in base64).
///
/// From `--webhook-secret` / `FERRY_WEBHOOK_SECRET` when given; else kept in the spool as `webhook-secret`
/// (mode 0600, `PrivateFile`), made at the first start from 32 bytes of OpenSSL's CSPRNG and logged once, so a
/// receiver can be configured with it. With a store several nodes share (`shared`) and no flag, every node signs
/// with one secret, kept in the store's `meta` table under the file's name: the first node to start proposes its
/// spool's secret (or a new one, then logged).
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

    /// The configured secret, else the one in the spool (with `shared`, the store's), else a new one (saved and logged).
    /// - Throws: `ServiceError.startup` when the spool's file (or the store's value) holds something that is not a
    ///   secret; `ServiceError.system` when a new one cannot be written; the store's error when it cannot be read.
    static func resolve(configured: String?, spool: String, shared: (any ClusterJobStore)? = nil,
                        logger: Logger) async throws -> WebhookSecret {
        if let configured {
            guard let secret = WebhookSecret(configured) else {
                throw ServiceError.startup("the webhook secret must be whsec_ followed by base64")
            }
            return secret
        }
        let path = spool + "/" + fileName
        let local = try PrivateFile.load(path).map { text in
            guard let secret = WebhookSecret(text) else {
                throw ServiceError.startup("\(path) does not hold a whsec_ secret; delete it and Ferry makes a new one")
            }
            return secret
        }
        if let shared {
            let proposed = local ?? WebhookSecret(key: Secret.randomBytes(32))
            let text = try await shared.firstValue(forKey: fileName, proposing: proposed.text)
            guard let secret = WebhookSecret(text) else {
                throw ServiceError.startup("the store's \(fileName) does not hold a whsec_ secret")
            }
            if local == nil, secret == proposed {
                logger.notice("generated the webhook signing secret \(secret.text) (kept in the store, the same on every node); receivers verify notices with it")
            }
            return secret
        }
        if let local { return local }
        let secret = WebhookSecret(key: Secret.randomBytes(32))
        try PrivateFile.save(secret.text, at: path)
        logger.notice("generated the webhook signing secret \(secret.text) (kept in \(path)); receivers verify notices with it")
        return secret
    }
}
