/// A progress sample of an upload.
public struct DeliveryProgress: Sendable, Equatable {
    /// Bytes of the file handed to the target so far in this attempt.
    public var bytesSent: Int64
    public var bytesTotal: Int64
    /// Smoothed bytes per second.
    public var bytesPerSecond: Double
    /// Seconds to go; nil when nothing moves.
    public var eta: Double?

    public init(bytesSent: Int64, bytesTotal: Int64, bytesPerSecond: Double, eta: Double?) {
        self.bytesSent = bytesSent
        self.bytesTotal = bytesTotal
        self.bytesPerSecond = bytesPerSecond
        self.eta = eta
    }
}
