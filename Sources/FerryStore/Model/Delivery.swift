import FerryCore
import Foundation

/// A job's onward delivery (API `deliver`, shown as `delivery`): where the finished file goes and how far it got.
///
/// A plain value inside `JobRecord.Details`; the supervisor changes it, the stores keep it whole (SQLite: one JSON
/// column). `url` keeps any userinfo for the request: views redact it.
public struct Delivery: Sendable, Equatable, Codable {
    public enum Method: String, Sendable, Codable {
        /// The file is the raw request body.
        case put = "PUT"
        /// `multipart/form-data`: the text `fields`, then the file in the part named `field`.
        case post = "POST"
    }

    public enum State: String, Sendable, Codable {
        case pending, sending, delivered, failed
    }

    // What was asked.
    public var url: String
    public var method: Method
    /// The multipart part that carries the file (POST).
    public var field: String
    /// Text parts sent before the file (POST), in the order given.
    public var fields: [HeaderField]
    /// Request headers for the target.
    public var headers: [HeaderField]
    /// Remove the local file once delivered.
    public var deleteAfter: Bool

    // How far it got.
    public var state: State = .pending
    public var bytesSent: Int64 = 0
    public var bytesTotal: Int64?
    public var attempts: Int = 0
    public var httpStatus: Int?
    public var error: JobFailure?
    public var deliveredAt: Date?

    public init(url: String, method: Method, field: String = "file", fields: [HeaderField] = [], headers: [HeaderField] = [],
                deleteAfter: Bool = false) {
        self.url = url
        self.method = method
        self.field = field
        self.fields = fields
        self.headers = headers
        self.deleteAfter = deleteAfter
    }

    /// The same delivery, sent again from the first byte.
    public func restarted() -> Delivery {
        var fresh = Delivery(url: url, method: method, field: field, fields: fields, headers: headers, deleteAfter: deleteAfter)
        fresh.attempts = attempts
        return fresh
    }
}

extension JobRecord {
    /// Its download is complete and verified (the file is kept for a delivery still to be made); false for jobs
    /// without a delivery, whose finished state says it.
    public var hasDownloadedFile: Bool {
        guard let delivery = self.delivery else { return false }
        return self.sha256 != nil && delivery.state != .delivered
    }
}
