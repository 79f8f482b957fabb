import FerryCore
import FerryEngine

/// The transfers the supervisor drives. `DownloadEngine` is the real one; the supervisor's unit tests use a fake.
/// Every method returns at once; what happens arrives later as `TransferEvent`s.
protocol TransferControl: Sendable {
    func submit(_ spec: TransferSpec)
    /// Stops a transfer keeping its bytes; `stopped` gets the bytes on disk once the writer has flushed (nil when
    /// there was no such transfer).
    func pause(id: String, stopped: (@Sendable (Int64?) -> Void)?)
    /// Stops a transfer for good and deletes its partial file and its name.
    func cancel(id: String)
    func updatePriority(id: String, _ priority: Int)
    func updateRateLimit(id: String, _ bytesPerSecond: Int64?)
    func updateURL(id: String, _ url: SubmittedURL)
    /// Uploads a finished file to its delivery target; `.delivering`, `.deliveryWaiting`, `.delivered` or
    /// `.deliveryFailed` follow.
    func deliver(_ spec: DeliverySpec)
    /// Stops a delivery without a further event.
    func stopDelivery(id: String, stopped: (@Sendable () -> Void)?)
}
