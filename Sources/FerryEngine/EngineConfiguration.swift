import FerryCore

/// How the download engine behaves. Every limit has a production default; tests shorten the timeouts.
public struct EngineConfiguration: Sendable {
    /// Transfers running at once; the rest wait (`.waiting(.queued)`). Changeable later with `setMaxConcurrent`.
    public var maxConcurrent: Int = 4
    /// Transfers running at once against one host.
    public var maxPerHost: Int = 6
    /// Allow loopback, private, link-local and other non-public destinations (checked on every connect).
    public var allowPrivateNetworks: Bool = false
    /// Largest file accepted, in bytes; nil for no limit.
    public var maxFileSize: Int64? = nil
    /// Free space the spool's file system must keep; below it transfers wait with `.diskFull`.
    public var minFreeSpace: Int64 = 1 << 30
    /// Download speed shared by all transfers, in bytes per second; nil for no limit.
    public var globalMaxBytesPerSecond: Int64? = nil
    /// Back-off between attempts and how many attempts a transfer gets.
    public var retry: RetryPolicy = RetryPolicy()
    /// Seconds to wait for a TCP/TLS connection.
    public var connectTimeout: Double = 15
    /// A transfer slower than `lowSpeedLimit` bytes per second for `lowSpeedTime` seconds times out.
    public var lowSpeedLimit: Int = 1024
    public var lowSpeedTime: Int = 60
    /// Redirects followed before `too_many_redirects`.
    public var maxRedirects: Int = 10
    /// libcurl's receive buffer (`CURLOPT_BUFFERSIZE`), bytes.
    public var receiveBufferSize: Int = 512 * 1024
    /// Minimum seconds between two progress events of one transfer.
    public var progressInterval: Double = 0.25
    public var userAgent: String = "Ferry/0.1"
    /// Bytes received but not yet written a transfer may hold before libcurl is paused.
    public var writeBufferLimit: Int = 8 << 20
    /// Seconds between two free-space checks while transfers run or wait for space.
    public var diskCheckInterval: Double = 1

    public init() {}
}
