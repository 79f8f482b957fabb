import FerryCore
import Foundation

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
    /// Bytes received from each source (`TransferSpec.sources` order); empty for a job without mirrors.
    public var sourceBytes: [Int64]

    public init(bytesReceived: Int64, bytesExpected: Int64?, bytesPerSecond: Double, eta: Double?, sourceBytes: [Int64] = []) {
        self.sourceBytes = sourceBytes
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
        self.eta = eta
    }
}
