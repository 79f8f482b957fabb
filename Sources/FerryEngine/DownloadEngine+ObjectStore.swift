import Dispatch

/// The cluster's object store, reached through this engine: its requests run on the engine's multi handle and
/// queue, beside the downloads, with the engine's connect and stall timeouts and user agent.
extension DownloadEngine {
    /// A client of `location`, signing with `credentials`. Call its `stop()` before shutting the engine down.
    public func objectStoreClient(location: ObjectStoreLocation, credentials: ObjectStoreCredentials) -> ObjectStoreClient {
        ObjectStoreClient(location: location, credentials: credentials, multi: multi) { [weak self] in
            var limits = ObjectStoreClient.Limits()
            guard let self else { return limits }
            dispatchPrecondition(condition: .onQueue(self.queue))
            limits.connectTimeout = self.configuration.connectTimeout
            limits.lowSpeedTime = self.configuration.lowSpeedTime
            limits.userAgent = self.configuration.userAgent
            return limits
        }
    }
}
