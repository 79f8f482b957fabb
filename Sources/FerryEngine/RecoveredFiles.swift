import Foundation

/// What the spool holds of one job at start-up.
public enum RecoveredFiles: Sendable, Equatable {
    /// Its partial file, with this many bytes. (An unfinished job the answer does not name has none.)
    case partial(bytes: Int64)
    /// Its file was moved into `files/` just before a crash, before the store heard of it; the record names it, and
    /// the file is there, whole. The partial file is gone.
    case finished(FinishRecord)
}
