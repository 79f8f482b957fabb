import Foundation

/// What a `GetObject` sink did with a chunk of the object.
public enum ObjectBodyDisposition: Sendable {
    case consumed
    /// Not taken now: libcurl keeps the chunk and offers it again after `ObjectReading.resume()`, so a slow reader
    /// holds the store back instead of filling memory.
    case pause
    /// No more bytes: the exchange ends with an `ObjectStoreError` of kind `.stopped`.
    case stop
}

/// The caller's hold on a `GetObject` in flight: resumes a sink that answered `.pause`.
///
/// Made by the caller and handed to `ObjectStoreClient.getObject`, which attaches the running exchange to it.
/// Thread safety: its one field is guarded by `lock`; `resume()` may be called from any thread, also from inside
/// the sink (the resumption then happens after the sink returned).
public final class ObjectReading: @unchecked Sendable {
    private let lock = NSLock()
    private var resumeExchange: (@Sendable () -> Void)?

    public init() {}

    /// Offers the paused bytes to the sink again. Does nothing once the exchange ended.
    public func resume() {
        lock.lock()
        let resumeExchange = self.resumeExchange
        lock.unlock()
        resumeExchange?()
    }

    /// Set by the client while the exchange runs; nil afterwards.
    func attach(_ resumeExchange: (@Sendable () -> Void)?) {
        lock.lock()
        self.resumeExchange = resumeExchange
        lock.unlock()
    }
}
