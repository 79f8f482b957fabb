import FerryCore
import Foundation

/// The API's job object, as far as the terminal client shows it. Fields a server leaves out decode as nil.
public struct Job: Sendable, Equatable, Decodable {
    public var id: String
    public var url: String
    public var finalURL: String?
    public var state: JobState
    public var filename: String?
    public var bytesReceived: Int64
    public var bytesExpected: Int64?
    public var progress: Double?
    /// Bytes per second, smoothed by the server.
    public var speed: Double
    /// Seconds left, when the server can tell.
    public var eta: Double?
    public var contentType: String?
    public var sha256: String?
    public var expectedSHA256: String?
    /// The digest the file must have (`checksum`), of any algorithm; nil when none was asked (or from a server
    /// without checksums, which gives only `expectedSha256`).
    public var checksum: Checksum?
    public var error: JobFailure?
    public var attempts: Int?
    public var priority: Int?
    public var createdAt: String?
    public var startedAt: String?
    public var finishedAt: String?
    public var contentURL: String?
    /// The job's tags as given; `[]` when none (or from a server without tags).
    public var tags: [String] = []
    /// The onward delivery, for a job created with `deliver`; nil otherwise (or from a server without delivery).
    public var delivery: Delivery?
    /// The job's sources when it was created with mirrors (`url` first); nil otherwise.
    public var sources: [JobSource]?

    public init(id: String, url: String, state: JobState, filename: String? = nil, bytesReceived: Int64 = 0,
                bytesExpected: Int64? = nil, progress: Double? = nil, speed: Double = 0, eta: Double? = nil,
                sha256: String? = nil, error: JobFailure? = nil) {
        self.id = id
        self.url = url
        self.state = state
        self.filename = filename
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.progress = progress
        self.speed = speed
        self.eta = eta
        self.sha256 = sha256
        self.error = error
    }

    enum CodingKeys: String, CodingKey {
        case id, url, finalUrl, state, filename, bytesReceived, bytesExpected, progress, speed, eta, contentType
        case sha256, expectedSha256, checksum, error, attempts, priority, createdAt, startedAt, finishedAt, contentUrl, tags
        case delivery, sources
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        url = try c.decodeIfPresent(String.self, forKey: .url) ?? ""
        finalURL = try c.decodeIfPresent(String.self, forKey: .finalUrl)
        state = JobState(try c.decode(String.self, forKey: .state))
        filename = try c.decodeIfPresent(String.self, forKey: .filename)
        bytesReceived = try c.decodeIfPresent(Int64.self, forKey: .bytesReceived) ?? 0
        bytesExpected = try c.decodeIfPresent(Int64.self, forKey: .bytesExpected)
        progress = try c.decodeIfPresent(Double.self, forKey: .progress)
        speed = try c.decodeIfPresent(Double.self, forKey: .speed) ?? 0
        eta = try c.decodeIfPresent(Double.self, forKey: .eta)
        contentType = try c.decodeIfPresent(String.self, forKey: .contentType)
        sha256 = try c.decodeIfPresent(String.self, forKey: .sha256)
        expectedSHA256 = try c.decodeIfPresent(String.self, forKey: .expectedSha256)
        if let given = try c.decodeIfPresent(ChecksumObject.self, forKey: .checksum) {
            checksum = try? Checksum(algorithmName: given.algorithm, value: given.value)
        }
        error = try c.decodeIfPresent(JobFailure.self, forKey: .error)
        attempts = try c.decodeIfPresent(Int.self, forKey: .attempts)
        priority = try c.decodeIfPresent(Int.self, forKey: .priority)
        createdAt = try c.decodeIfPresent(String.self, forKey: .createdAt)
        startedAt = try c.decodeIfPresent(String.self, forKey: .startedAt)
        finishedAt = try c.decodeIfPresent(String.self, forKey: .finishedAt)
        contentURL = try c.decodeIfPresent(String.self, forKey: .contentUrl)
        tags = try c.decodeIfPresent([String].self, forKey: .tags) ?? []
        delivery = try c.decodeIfPresent(Delivery.self, forKey: .delivery)
        sources = try c.decodeIfPresent([JobSource].self, forKey: .sources)
    }

    /// The API's `checksum` object.
    private struct ChecksumObject: Decodable {
        var algorithm: String
        var value: String
    }

    /// The digest asked for: `checksum`, else `expectedSha256` as a SHA-256 checksum.
    public var expectedChecksum: Checksum? {
        checksum ?? expectedSHA256.flatMap { try? Checksum(algorithm: .sha256, value: $0) }
    }

    /// The progress fraction: the server's, else computed from the byte counts, else nil (unknown length).
    public var fraction: Double? {
        if let progress { return min(1, max(0, progress)) }
        if state == .finished { return 1 }
        guard let expected = bytesExpected, expected > 0 else { return nil }
        return min(1, Double(bytesReceived) / Double(expected))
    }

    /// The name to show: the filename, else the URL's last path segment, else the URL.
    public var displayName: String {
        if let filename, !filename.isEmpty { return filename }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let parts = path.split(separator: "/")
        if parts.count > 2, let last = parts.last { return String(last) }
        return url
    }

    /// Applies a `progress` event's numbers: the download's, or with `phase` `delivering` the upload's.
    public mutating func apply(_ update: ProgressUpdate) {
        if update.isDelivery {
            var upload = delivery ?? Delivery(url: "", state: "sending")
            upload.apply(update)
            delivery = upload
            return
        }
        bytesReceived = update.bytesReceived
        bytesExpected = update.bytesExpected
        progress = update.progress
        if let speed = update.speed { self.speed = speed }
        eta = update.eta
    }
}
