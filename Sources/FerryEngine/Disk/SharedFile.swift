import FerryCore
import Foundation

/// A job's own finished file made from another job's (API.md, POST /api/v1/jobs: a dedupe match that asks for more
/// shares the transfer): the job's checksum checked against the shared bytes, then a link (or a copy) under the
/// job's own name. Never a second download.
///
/// A plain request and its outcome; `verify` and `link` do the I/O on the queue that calls them (the engine's: see
/// `DownloadEngine.share(_:done:)`).
public struct SharedFile: Sendable, Equatable {
    /// The job getting the file.
    public var jobID: String
    /// The finished file whose bytes it shares (another job's, in `files/`).
    public var source: String
    /// The name reserved for the job.
    public var filename: String
    /// The source's SHA-256 (lowercase hex), known from its own download.
    public var sha256: String
    /// What the job's file must match; nil when it asked for no checksum.
    public var checksum: Checksum?

    public init(jobID: String, source: String, filename: String, sha256: String, checksum: Checksum?) {
        self.jobID = jobID
        self.source = source
        self.filename = filename
        self.sha256 = sha256
        self.checksum = checksum
    }

    public enum Outcome: Sendable, Equatable {
        /// The job's file is in `files/` under this name, synced.
        case finished(filename: String)
        /// The checksum did not match (`checksum_mismatch`), or the file could not be made; nothing was kept.
        case failed(JobFailure)
        /// The source file is no longer there: the job needs a transfer of its own.
        case sourceGone
    }

    /// The algorithm that must be computed from the source's bytes (nil: the SHA-256 already known answers).
    var algorithmToCompute: DigestAlgorithm? {
        guard let checksum, checksum.algorithm != .sha256 else { return nil }
        return checksum.algorithm
    }

    /// The failure when the source's digests (`computed`, for `algorithmToCompute`) do not match the checksum; nil
    /// when they do or none was asked. Pure.
    func mismatch(computed: String?) -> JobFailure? {
        guard let checksum else { return nil }
        let actual = checksum.algorithm == .sha256 ? sha256 : (computed ?? "")
        guard actual != checksum.value else { return nil }
        return FailureClassifier.classify(.checksumMismatch(expected: checksum, actual: actual)).failure
    }

    /// Checks the checksum against the source's bytes (hashing them when its algorithm is not SHA-256): nil when
    /// the file may be made, else the outcome.
    func verify(storage: any FileStorage) -> Outcome? {
        var computed: String?
        if let algorithm = algorithmToCompute {
            do throws(SystemError) {
                computed = try Digest.ofFile(storage.location(ofFinished: source), algorithms: [algorithm]).hex[algorithm]
            } catch {
                return error.code == ENOENT ? .sourceGone : .failed(Self.failure(error))
            }
        }
        return mismatch(computed: computed).map { .failed($0) }
    }

    /// Makes the file: a link or a copy (`FileStorage.share`).
    func link(storage: any FileStorage) -> Outcome {
        do throws(SystemError) {
            return .finished(filename: try storage.share(finished: source, as: filename, for: jobID))
        } catch {
            return error.code == ENOENT ? .sourceGone : .failed(Self.failure(error))
        }
    }

    static func failure(_ error: SystemError) -> JobFailure {
        JobFailure(code: .internalError, message: "the shared file could not be given to this job: \(error)")
    }
}
