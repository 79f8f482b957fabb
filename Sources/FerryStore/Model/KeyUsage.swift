/// Bytes an API key's transfers fetched in one time bucket (a key's `bytesPerDay`, API.md "API keys"): `bucket` is
/// a number of whole bucket lengths since 1970, chosen by the caller (15 minutes in the service). Stored summed, one
/// row a key and bucket, in the `key_usage` table (schema 12), so every node and every restart counts the same day.
public struct KeyUsage: Sendable, Hashable {
    public var key: String
    public var bucket: Int64
    public var bytes: Int64

    public init(key: String, bucket: Int64, bytes: Int64) {
        self.key = key
        self.bucket = bucket
        self.bytes = bytes
    }
}
