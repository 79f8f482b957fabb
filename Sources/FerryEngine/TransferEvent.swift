import FerryCore
import Foundation

/// What happens to a transfer, delivered serially and in order on the engine's event queue.
///
/// A transfer's events follow: `.waiting(.queued)`? → `.started` → `.responded` → (`.restarted` | `.progress`)*
/// → one of `.finished`, `.failed`, `.paused`, `.stopped`, or `.waiting(.retrying | .diskFull)` followed by a new
/// `.started` later. `cancel` produces no further event.
public enum TransferEvent: Sendable {
    /// Now downloading; `offset` > 0 when continuing from that many bytes on disk.
    case started(id: String, offset: Int64)
    /// The origin's answer was accepted: name, type, size and validators (store them for resume).
    case responded(id: String, TransferMetadata)
    /// The bytes on disk were discarded; the download starts again from zero.
    case restarted(id: String, reason: String)
    /// At most one per `progressInterval` per transfer.
    case progress(id: String, TransferProgress)
    /// Not downloading for now, and why; the engine continues by itself.
    case waiting(id: String, reason: WaitReason)
    /// The file is complete, verified and in `files/`.
    case finished(id: String, FinishedFile)
    /// Gave up; partial bytes are kept (deleted only for `checksum_mismatch`).
    case failed(id: String, JobFailure)
    /// Paused by `pause(id:)`; the bytes on disk are kept.
    case paused(id: String, bytesOnDisk: Int64)
    /// Stopped by `shutdown()` (not a user pause); the bytes on disk are kept.
    case stopped(id: String, bytesOnDisk: Int64)

    /// The job the event is about.
    public var id: String {
        switch self {
        case .started(let id, _), .responded(let id, _), .restarted(let id, _), .progress(let id, _),
             .waiting(let id, _), .finished(let id, _), .failed(let id, _), .paused(let id, _), .stopped(let id, _):
            return id
        }
    }
}

/// What the origin said about the file, once its response was accepted.
public struct TransferMetadata: Sendable, Equatable {
    /// The URL after redirects.
    public var finalURL: String
    /// The name reserved in the spool ("name (1).ext" after collisions).
    public var filename: String
    public var contentType: String?
    /// Size of the whole file; nil when unknown.
    public var bytesExpected: Int64?
    /// Validators for a later resume, as received.
    public var etag: String?
    public var lastModified: String?
    /// Bytes kept from disk before this response (the resume offset, or the bytes a segmented download already
    /// had; 0 when starting from zero).
    public var offset: Int64

    public init(finalURL: String, filename: String, contentType: String?, bytesExpected: Int64?, etag: String?, lastModified: String?, offset: Int64) {
        self.finalURL = finalURL
        self.filename = filename
        self.contentType = contentType
        self.bytesExpected = bytesExpected
        self.etag = etag
        self.lastModified = lastModified
        self.offset = offset
    }
}

/// A progress sample.
public struct TransferProgress: Sendable, Equatable {
    /// Bytes of the file received so far, including the resume offset (for a segmented download, over all its
    /// connections; its file then has gaps: `Spool.partialPrefix` says how much of it is contiguous).
    public var bytesReceived: Int64
    public var bytesExpected: Int64?
    /// Smoothed bytes per second.
    public var bytesPerSecond: Double
    /// Seconds to go; nil when the size is unknown or nothing moves.
    public var eta: Double?

    public init(bytesReceived: Int64, bytesExpected: Int64?, bytesPerSecond: Double, eta: Double?) {
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
        self.eta = eta
    }
}

/// Why a transfer is waiting.
public enum WaitReason: Sendable, Equatable {
    /// Behind the concurrency limits.
    case queued
    /// Backing off after a retryable failure; `attempt` is the number of failed attempts so far.
    case retrying(at: Date, attempt: Int, failure: JobFailure)
    /// Free space is below the reserve, or a write hit ENOSPC; continues when space returns.
    case diskFull
}

/// A finished file.
public struct FinishedFile: Sendable, Equatable {
    public var filename: String
    /// Absolute path in `files/`.
    public var path: String
    public var size: Int64
    /// SHA-256, lowercase hex.
    public var sha256: String
    public var contentType: String?
    public var finalURL: String
    public var etag: String?
    public var lastModified: String?

    public init(filename: String, path: String, size: Int64, sha256: String, contentType: String?, finalURL: String, etag: String?, lastModified: String?) {
        self.filename = filename
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.contentType = contentType
        self.finalURL = finalURL
        self.etag = etag
        self.lastModified = lastModified
    }
}

