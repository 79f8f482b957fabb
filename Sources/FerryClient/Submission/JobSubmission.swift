import Foundation

/// The body of `POST /api/v1/jobs` for one URL. Absent options are left out, so the server's defaults apply.
public struct JobSubmission: Sendable, Equatable, Encodable {
    public var url: String
    public var filename: String?
    public var headers: [String: String]?
    public var sha256: String?
    public var priority: Int?
    /// The job's own speed limit, bytes per second.
    public var maxBytesPerSecond: Int64?
    public var connections: Int?
    /// Only sent when true.
    public var paused: Bool?
    /// Only sent when there are some.
    public var tags: [String]?
    /// Where to upload the finished file, if anywhere.
    public var deliver: DeliverySubmission?
    /// More URLs for the same file; only sent when there are some.
    public var mirrors: [String]?

    public init(url: String, filename: String? = nil, headers: [String: String]? = nil, sha256: String? = nil,
                priority: Int? = nil, maxBytesPerSecond: Int64? = nil, connections: Int? = nil, paused: Bool? = nil,
                tags: [String]? = nil, deliver: DeliverySubmission? = nil) {
        self.url = url
        self.filename = filename
        self.headers = headers
        self.sha256 = sha256
        self.priority = priority
        self.maxBytesPerSecond = maxBytesPerSecond
        self.connections = connections
        self.paused = paused
        self.tags = tags
        self.deliver = deliver
    }
}
