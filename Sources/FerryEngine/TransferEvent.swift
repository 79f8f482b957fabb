import FerryCore
import Foundation

/// What happens to a transfer, delivered serially and in order on the engine's event queue.
///
/// A transfer's events follow: `.waiting(.queued)`? → `.started` → `.responded` → (`.restarted` | `.progress`)*
/// → one of `.finished`, `.failed`, `.paused`, `.stopped`, or `.waiting(.retrying | .diskFull)` followed by a new
/// `.started` later. With an object store, `.storing` may come before `.finished` (or `.failed`, `.stopped`).
/// `cancel` produces no further event.
public enum TransferEvent: Sendable {
    /// Now downloading; `offset` > 0 when continuing from that many bytes on disk.
    case started(id: String, offset: Int64)
    /// The origin's answer was accepted: name, type, size and validators (store them for resume).
    case responded(id: String, TransferMetadata)
    /// The bytes on disk were discarded; the download starts again from zero.
    case restarted(id: String, reason: String)
    /// At most one per `progressInterval` per transfer.
    case progress(id: String, TransferProgress)
    /// A source of a job with mirrors was dropped for the rest of this job (`index` in `TransferSpec.sources`): it
    /// failed, or served another version of the file. The others carry on; the last active one is never dropped.
    case sourceDropped(id: String, index: Int, JobFailure)
    /// Not downloading for now, and why; the engine continues by itself.
    case waiting(id: String, reason: WaitReason)
    /// Every byte is received and verified, but storing the file in the object store failed in a way worth
    /// retrying (the store is unreachable or failing): it is tried again at `at`, and the transfer stays running.
    case storing(id: String, at: Date, attempt: Int, failure: JobFailure)
    /// The file is complete, verified and in `files/`.
    case finished(id: String, FinishedFile)
    /// The SHA-256 of a file whose `.finished` came without one (a job with no checksum to verify and no
    /// delivery: the digest is computed after the file was whole and durable). Also after start-up, for a finished
    /// file whose digest was never stored (`DownloadEngine.digestFinished`).
    case digested(id: String, sha256: String)
    /// Gave up; partial bytes are kept (deleted only for `checksum_mismatch`).
    case failed(id: String, JobFailure)
    /// Paused by `pause(id:)`; the bytes on disk are kept.
    case paused(id: String, bytesOnDisk: Int64)
    /// Stopped by `shutdown()` (not a user pause); the bytes on disk are kept.
    case stopped(id: String, bytesOnDisk: Int64)

    // A delivery (`deliver(_:)`): `.delivering`* → `.delivered`, `.deliveryFailed`, or `.deliveryWaiting` and
    // `.delivering` again later; `stopDelivery` produces no further event.

    /// The upload runs (first with 0 bytes sent, then at most one per `progressInterval`).
    case delivering(id: String, DeliveryProgress)
    /// The upload failed in a way worth retrying; it starts again from the first byte at `at`.
    case deliveryWaiting(id: String, at: Date, attempt: Int, failure: JobFailure)
    /// The target answered 2xx.
    case delivered(id: String, status: Int)
    /// The target refused the file, or the retries ran out.
    case deliveryFailed(id: String, JobFailure)

    /// The job the event is about.
    public var id: String {
        switch self {
        case .started(let id, _), .responded(let id, _), .restarted(let id, _), .progress(let id, _), .sourceDropped(let id, _, _),
             .waiting(let id, _), .storing(let id, _, _, _), .finished(let id, _), .digested(let id, _), .failed(let id, _), .paused(let id, _), .stopped(let id, _),
             .delivering(let id, _), .deliveryWaiting(let id, _, _, _), .delivered(let id, _), .deliveryFailed(let id, _):
            return id
        }
    }
}

