import FerryCore
import Foundation

/// A job's onward delivery (the API's `delivery` object): where the finished file goes, and how far the upload
/// got. Fields a server leaves out decode as nil or zero.
public struct Delivery: Sendable, Equatable, Decodable {
    /// The target URL, its userinfo shown as `***@`.
    public var url: String
    /// `PUT` or `POST`.
    public var method: String
    /// `pending`, `sending`, `delivered` or `failed` (kept as sent for states a newer server adds).
    public var state: String
    public var bytesSent: Int64
    public var bytesTotal: Int64?
    public var progress: Double?
    /// Upload bytes per second, smoothed by the server.
    public var speed: Double
    public var eta: Double?
    public var attempts: Int?
    /// The target's last answer.
    public var httpStatus: Int?
    public var error: JobFailure?
    public var deliveredAt: String?

    public init(url: String, method: String = "PUT", state: String = "pending", bytesSent: Int64 = 0,
                bytesTotal: Int64? = nil, progress: Double? = nil, speed: Double = 0, eta: Double? = nil,
                attempts: Int? = nil, httpStatus: Int? = nil, error: JobFailure? = nil, deliveredAt: String? = nil) {
        self.url = url
        self.method = method
        self.state = state
        self.bytesSent = bytesSent
        self.bytesTotal = bytesTotal
        self.progress = progress
        self.speed = speed
        self.eta = eta
        self.attempts = attempts
        self.httpStatus = httpStatus
        self.error = error
        self.deliveredAt = deliveredAt
    }

    enum CodingKeys: String, CodingKey {
        case url, method, state, bytesSent, bytesTotal, progress, speed, eta, attempts, httpStatus, error, deliveredAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.decodeIfPresent(String.self, forKey: .url) ?? ""
        method = try c.decodeIfPresent(String.self, forKey: .method) ?? "PUT"
        state = try c.decodeIfPresent(String.self, forKey: .state) ?? "pending"
        bytesSent = try c.decodeIfPresent(Int64.self, forKey: .bytesSent) ?? 0
        bytesTotal = try c.decodeIfPresent(Int64.self, forKey: .bytesTotal)
        progress = try c.decodeIfPresent(Double.self, forKey: .progress)
        speed = try c.decodeIfPresent(Double.self, forKey: .speed) ?? 0
        eta = try c.decodeIfPresent(Double.self, forKey: .eta)
        attempts = try c.decodeIfPresent(Int.self, forKey: .attempts)
        httpStatus = try c.decodeIfPresent(Int.self, forKey: .httpStatus)
        error = try c.decodeIfPresent(JobFailure.self, forKey: .error)
        deliveredAt = try c.decodeIfPresent(String.self, forKey: .deliveredAt)
    }

    /// Whether the upload is running now.
    public var isSending: Bool { state == "sending" }

    /// The upload's fraction: the server's, else from the byte counts; 1 once delivered; nil when unknown.
    public var fraction: Double? {
        if state == "delivered" { return 1 }
        if let progress { return min(1, max(0, progress)) }
        guard let total = bytesTotal, total > 0 else { return nil }
        return min(1, Double(bytesSent) / Double(total))
    }

    /// The target's host (and port, when one is given), e.g. `dav.example.org:8443`; the URL itself when it
    /// has no host.
    public var host: String {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return url }
        return components.port.map { "\(host):\($0)" } ?? host
    }

    /// Applies an upload `progress` event's numbers (`phase: "delivering"`).
    public mutating func apply(_ update: ProgressUpdate) {
        if let sent = update.bytesSent { bytesSent = sent }
        if update.bytesTotal != nil { bytesTotal = update.bytesTotal }
        progress = update.progress
        if let speed = update.speed { self.speed = speed }
        eta = update.eta
        if state == "pending" { state = "sending" }
    }
}
