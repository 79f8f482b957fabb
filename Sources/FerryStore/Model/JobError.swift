/// Why a job failed, or why it is waiting (`disk_full`, `retrying`). `code` is one of the stable codes in API.md.
public struct JobError: Codable, Sendable, Equatable {
    public var code: String
    public var message: String
    /// The origin's HTTP status, when the failure came from one.
    public var httpStatus: Int?

    public init(code: String, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }
}
