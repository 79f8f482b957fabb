import FerryCore
import Foundation

/// How the download engine behaves. Every limit has a production default; tests shorten the timeouts.
public struct EngineConfiguration: Sendable {
    /// Transfers running at once; the rest wait (`.waiting(.queued)`). Changeable later with `setMaxConcurrent`.
    public var maxConcurrent: Int = 4
    /// Transfers running at once against one host.
    public var maxPerHost: Int = 6
    /// Which destinations may be connected (checked on every connect, every redirect hop).
    public var destinations = AddressPolicy()
    /// Allow loopback, private, link-local and other non-public destinations (`destinations.allowPrivateNetworks`).
    public var allowPrivateNetworks: Bool {
        get { destinations.allowPrivateNetworks }
        set { destinations.allowPrivateNetworks = newValue }
    }
    /// The proxy for origins and deliveries (`--proxy`); nil connects directly. With one, each destination is
    /// resolved and checked by Ferry and the proxy told to connect to the checked address (`DestinationPin`).
    public var proxy: ProxySetting? = nil
    /// Largest file accepted, in bytes; nil for no limit.
    public var maxFileSize: Int64? = nil
    /// Free space the spool's file system must keep; below it transfers wait with `.diskFull`.
    public var minFreeSpace: Int64 = 1 << 30
    /// Download speed shared by all transfers, in bytes per second; nil for no limit.
    public var globalMaxBytesPerSecond: Int64? = nil
    /// Bytes per part of a file's multipart upload to the object store (at least 5 MiB, S3's minimum; more when the
    /// file would need more than 10,000 parts). With a cluster's store, each part is uploaded as soon as the file's
    /// written prefix covers it, so a node taking the job over fetches at most about one part again.
    public var objectPartSize: Int64 = 16 << 20
    /// Back-off between attempts and how many attempts a transfer gets.
    public var retry: RetryPolicy = RetryPolicy()
    /// Seconds to wait for a TCP/TLS connection.
    public var connectTimeout: Double = 15
    /// A transfer slower than `lowSpeedLimit` bytes per second for `lowSpeedTime` seconds times out.
    public var lowSpeedLimit: Int = 1024
    public var lowSpeedTime: Int = 60
    /// The known-hosts file SFTP servers' host keys are checked against (`--ssh-known-hosts`): a key not in it, or
    /// another key than the one there, fails the job with `host_key_unknown`. Never written to. The service sets
    /// it (`ServiceConfiguration.sshKnownHosts`, default `$HOME/.ssh/known_hosts`).
    public var sshKnownHosts: String = NSHomeDirectory() + "/.ssh/known_hosts"
    /// Redirects followed before `too_many_redirects`.
    public var maxRedirects: Int = 10
    /// libcurl's receive buffer (`CURLOPT_BUFFERSIZE`), bytes, per connection.
    ///
    /// Measured on a 1 GiB single-connection download from nginx on loopback (release build, 2 cores shared with
    /// other busy jobs, 5 interleaved runs per batch, medians of 4 batches): 512 KiB used 2.33 / 2.47 / 2.81 /
    /// 2.40 s of CPU against 2.50 / 2.48 / 2.99 / 2.56 s with 100 KiB (the curl CLI's size), about 5% less; wall
    /// times were 2.81 / 2.74 / 3.55 / 2.85 s against 2.96 / 2.49 / 3.23 / 3.05 s, no difference beyond the noise of
    /// the shared machine. So 512 KiB stays: fewer write callbacks and writer hand-offs per byte. Its cost: the
    /// buffer's memory per connection (16 segments: 8 MiB). A transfer under a speed limit gets a smaller one
    /// (`DownloadEngine.receiveBufferSize(for:)`), so that the limit holds over short windows.
    public var receiveBufferSize: Int = 512 * 1024
    /// Minimum seconds between two progress events of one transfer.
    public var progressInterval: Double = 0.25
    public var userAgent: String = "Ferry/0.1"
    /// Bytes received but not yet written a transfer may hold before libcurl is paused.
    public var writeBufferLimit: Int = 8 << 20
    /// Seconds between two free-space checks while transfers run or wait for space.
    public var diskCheckInterval: Double = 1

    // Segmented (multi-connection) downloads.

    /// Connections for a transfer that does not say (`TransferSpec.connections == nil`) whose file has at least
    /// `segmentationThreshold` bytes.
    public var defaultConnections: Int = 4
    /// Smallest file the default connections apply to; smaller ones use one connection unless the spec asks.
    public var segmentationThreshold: Int64 = 8 << 20
    /// No segment is planned smaller than this, and a free connection takes over half of a segment only when
    /// both halves keep at least this many bytes.
    public var minimumSegmentSize: Int64 = 1 << 20
    /// Minimum seconds between two saves of a segmented download's state (`partial/<id>.segments`) while it runs;
    /// it is also saved when the download stops.
    public var segmentStateInterval: Double = 0.5
    /// A download that does not ask for a number of connections starts on one and adds more only while they raise
    /// the total (`AdaptiveSplit`): each level is measured for `adaptiveSettle` seconds, a single connection at
    /// least `adaptiveFastEnough` bytes per second is left alone, and a level must beat the previous one by
    /// `adaptiveMinimumGain` for the ramp to go on.
    public var adaptiveSettle: Double = 1
    public var adaptiveFastEnough: Double = 64 * 1024 * 1024
    public var adaptiveMinimumGain: Double = 1.25

    public init() {}
}
