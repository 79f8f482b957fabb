/// One request as the fault origin logged it (`GET /_requests`).
public struct FaultRequest: Decodable, Sendable, Equatable {
    public var method: String
    /// The decoded path, without the query.
    public var path: String
    /// The request target as sent.
    public var target: String
    /// Query parameters (the first value of each name).
    public var query: [String: String]
    /// Request headers, names lower-cased.
    public var headers: [String: String]
    /// The `Range` header, nil when absent.
    public var range: String?
    /// The `If-Range` header, nil when absent.
    public var ifRange: String?
    /// When the origin received it (Unix time).
    public var time: Double

    enum CodingKeys: String, CodingKey {
        case method, path, target, query, headers, range, time
        case ifRange = "if_range"
    }
}
