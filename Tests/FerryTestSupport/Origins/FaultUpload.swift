/// One upload as the fault origin received it (`GET /_uploads`): a `PUT` or `POST` to `/u/<name>`, recorded once
/// it ended (answered, or reset on purpose).
public struct FaultUpload: Decodable, Sendable {
    /// One part of a `multipart/form-data` body.
    public struct Part: Decodable, Sendable, Equatable {
        public var name: String?
        public var filename: String?
        public var contentType: String?
        public var length: Int
        public var sha256: String
        /// The part as text, for parts of up to 4 KiB.
        public var value: String?

        enum CodingKeys: String, CodingKey {
            case name, filename, length, sha256, value
            case contentType = "content_type"
        }
    }

    public var method: String
    /// The decoded path, without the query.
    public var path: String
    /// The key its scripted answers count under (the path and query without `key`, unless `key` was given).
    public var key: String
    /// Its 1-based number among the uploads with this key.
    public var number: Int
    /// Request headers, names lower-cased.
    public var headers: [String: String]
    /// Body bytes received, and their SHA-256 (hex): the whole body unless `complete` is false.
    public var length: Int
    public var sha256: String
    /// False when the origin reset the connection after `reset_after` bytes.
    public var complete: Bool
    /// The status answered; nil when reset.
    public var status: Int?
    /// Unix times: the request head arrived, the body was read, the answer was sent (nil when reset).
    public var time: Double
    public var bodyRead: Double
    public var answered: Double?
    /// `[seconds since arrival, body bytes]` about every 50 ms while the body arrived.
    public var timeline: [[Double]]
    /// The parts of a `multipart/form-data` body (nil for other bodies).
    public var parts: [Part]?

    enum CodingKeys: String, CodingKey {
        case method, path, key, number, headers, length, sha256, complete, status, time, answered, timeline, parts
        case bodyRead = "body_read"
    }

    /// The timeline as samples for `RateCheck`.
    public var samples: [(time: Double, bytes: Int64)] {
        timeline.compactMap { $0.count == 2 ? (time: $0[0], bytes: Int64($0[1])) : nil }
    }
}
