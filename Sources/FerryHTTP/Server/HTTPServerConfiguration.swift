import Foundation

/// How an `HTTPServer` listens and which limits it enforces. Times are seconds.
public struct HTTPServerConfiguration: Sendable {
    /// A name or literal address; every address it resolves to is bound ("localhost": 127.0.0.1 and ::1).
    public var host: String
    /// 0 picks a free port (see `HTTPServer.start()`'s result).
    public var port: Int
    /// Open connections beyond this are answered 503 and closed.
    public var maxConnections: Int
    /// Largest request body; beyond it 413.
    public var maxBodySize: Int
    /// From the first byte of a request until the end of its header block; then 408 and close.
    public var headerTimeout: Double
    /// A keep-alive connection with no request in progress is closed after this.
    public var idleTimeout: Double
    /// A response that makes no write progress for this long is aborted (slow or vanished readers).
    public var writeStallTimeout: Double
    /// A request body that makes no read progress for this long: 408 and close.
    public var bodyTimeout: Double
    /// Serial queues the connections are spread over (round-robin).
    public var connectionQueues: Int
    public var limits: RequestLimits

    public init(host: String = "127.0.0.1", port: Int = 8080, maxConnections: Int = 10_000, maxBodySize: Int = 1 << 20,
                headerTimeout: Double = 10, idleTimeout: Double = 60, writeStallTimeout: Double = 60,
                bodyTimeout: Double = 30, connectionQueues: Int = ProcessInfo.processInfo.activeProcessorCount,
                limits: RequestLimits = RequestLimits()) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxBodySize = maxBodySize
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.writeStallTimeout = writeStallTimeout
        self.bodyTimeout = bodyTimeout
        self.connectionQueues = connectionQueues
        self.limits = limits
    }
}
