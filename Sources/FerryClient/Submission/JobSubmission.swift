import FerryCore
import Foundation

/// The body of `POST /api/v1/jobs` for one URL. Absent options are left out, so the server's defaults apply.
/// Built by `AddArguments`, with the memberwise initializer.
public struct JobSubmission: Sendable, Equatable, Encodable {
    public var url: String
    public var filename: String?
    public var headers: [String: String]?
    public var sha256: String?
    /// The expected digest of another algorithm (or SHA-256), sent as `{"algorithm", "value"}`.
    public var checksum: ChecksumSubmission?
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
}

/// A job's `checksum` as the API takes it.
public struct ChecksumSubmission: Sendable, Equatable, Encodable {
    public var algorithm: String
    public var value: String

    public init(_ checksum: Checksum) {
        algorithm = checksum.algorithm.rawValue
        value = checksum.value
    }
}
