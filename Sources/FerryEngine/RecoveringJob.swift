import Foundation

/// A job's files as the service sees them at start-up (`DownloadEngine.recoverFiles`).
public struct RecoveringJob: Sendable, Equatable {
    public enum Standing: Sendable, Equatable {
        /// Waiting, downloading, paused or failed: it may own a partial file, and a finish record if it died finishing.
        case unfinished
        case finished
        case cancelled
    }

    public var id: String
    public var filename: String?
    public var standing: Standing

    public init(id: String, filename: String?, standing: Standing) {
        self.id = id
        self.filename = filename
        self.standing = standing
    }
}
