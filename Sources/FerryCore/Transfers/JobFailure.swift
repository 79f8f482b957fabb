/// Why a job failed, or why it is waiting (`disk_full`, `retrying`): the one failure type of the engine, the store,
/// the service and the client. Its `code` is one of API.md's stable codes; `httpStatus` is the origin's status
/// when the failure came from one.
public struct JobFailure: Error, Codable, Sendable, Equatable, CustomStringConvertible {
    public var code: FailureCode
    /// A sentence for people.
    public var message: String
    public var httpStatus: Int?

    public init(code: FailureCode, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }

    public var description: String { "\(code): \(message)" }
}

