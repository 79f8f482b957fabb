/// The `deliver` object of `POST /api/v1/jobs`: where Ferry uploads the finished file. Absent options are left
/// out, so the server's defaults apply (`PUT`, the part named `file`, the file kept). Built by `AddArguments`.
public struct DeliverySubmission: Sendable, Equatable, Encodable {
    /// The target, http or https.
    public var url: String
    /// `PUT` (the file as the raw body) or `POST` (`multipart/form-data`).
    public var method: String?
    /// For `POST`: the name of the file's part.
    public var field: String?
    /// For `POST`: text parts sent before the file.
    public var fields: [String: String]?
    /// Request headers for the target.
    public var headers: [String: String]?
    /// Only sent when true: remove the local file once delivered.
    public var deleteAfter: Bool?
}
