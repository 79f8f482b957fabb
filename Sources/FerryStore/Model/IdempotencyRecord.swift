import Foundation

/// The first answer given to a POST carrying an `Idempotency-Key`, replayed when the same key comes again.
///
/// `createdAt` is kept to the millisecond (see `StoredDate`).
public struct IdempotencyRecord: Codable, Sendable, Equatable {
    public var key: String
    /// A digest of the request body, to tell a retry (same body) from a conflicting reuse of the key.
    public var requestHash: String
    public var status: Int
    public var body: [UInt8]
    public var createdAt: Date

    public init(key: String, requestHash: String, status: Int, body: [UInt8], createdAt: Date) {
        self.key = key
        self.requestHash = requestHash
        self.status = status
        self.body = body
        self.createdAt = createdAt
    }
}
