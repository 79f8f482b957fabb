import Foundation
import FerryCore

/// Everything `ferry serve` can be told, resolved from flags, environment twins and defaults
/// (API.md, "Running"). A plain value: built once at start-up and handed to `FerryService`.
public struct ServiceConfiguration: Sendable, Equatable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    public var spool: String = "./spool"
    /// Where jobs are kept (`--store`): SQLite in the spool, or PostgreSQL.
    public var store: StoreSetting = .sqlite
    /// This node's name among the nodes sharing a PostgreSQL store (`--node-id`); the host name by default. Unused
    /// with SQLite.
    public var nodeID: String = ServiceConfiguration.hostName
    /// How long a node's heartbeat and its jobs' leases last (`--lease`, 15 s): a node renews them every third of it,
    /// and a node that stops renewing loses its jobs to the others this long after its last renewal.
    public var lease: Duration = .seconds(15)
    /// The S3 bucket finished files are kept in (`--object-store s3://bucket/prefix?endpoint=…&region=…`), checked
    /// when resolved; nil: the spool keeps them. The keys come from `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`.
    /// Several live nodes on one PostgreSQL store need it.
    public var objectStore: String?
    /// Test-only (no flag, no variable): lets several nodes share a PostgreSQL store without an object store, each
    /// with its own spool, so that tests can run nodes in one process. Never set it in a deployment: a file would
    /// exist on one node only.
    public var allowsNodesWithoutObjectStore = false
    /// Whether this service owns its process's allocator (no flag, no variable): it sets glibc's arenas and mmap
    /// threshold up at start and hands free memory back to the system (`FreeMemory`). `FerryService.run`, the
    /// `ferry serve` process, sets it; a service embedded in another process (the tests run dozens in one) leaves
    /// the host's allocator alone: two arenas for all of a test process's threads, and every embedded service
    /// walking the whole shared heap with `mallinfo2`/`malloc_trim` under the arena locks, froze every thread of
    /// `swift test` for 15–30 s on a busy machine (issue 24).
    public var managesProcessMemory = false
    public var token: String?
    /// A second token that may only read (`--read-token`): `GET`, `HEAD`, event streams, content, metrics.
    public var readToken: String?
    public var maxConcurrent: Int = 4
    /// Bytes per second over all downloads together (`--max-bytes-per-second`); nil: no limit. Like
    /// `maxConcurrent`, only the starting value: a value set through `PATCH /api/v1/settings` is kept and wins.
    public var maxBytesPerSecond: Int64?
    /// Connections to one host at once, segments of segmented downloads included (`--max-per-host`).
    public var maxPerHost: Int = 6
    /// Which destinations downloads may reach: public addresses, plus `--allow-private-networks` or the
    /// `--allow-network` blocks.
    public var destinations = AddressPolicy()
    /// Allow every non-public destination (`destinations.allowPrivateNetworks`).
    public var allowPrivateNetworks: Bool {
        get { destinations.allowPrivateNetworks }
        set { destinations.allowPrivateNetworks = newValue }
    }
    /// The proxy for origins, deliveries and webhooks (`--proxy`); nil connects directly. The environment's
    /// `http_proxy`, `https_proxy` and `ALL_PROXY` are never used.
    public var proxy: ProxySetting?
    public var maxFileSize: Int64?
    public var minFreeSpace: Int64 = 1 << 30
    public var spoolQuota: Int64?
    /// Ended jobs older than this many seconds are removed with their files.
    public var retention: Double?
    /// Where the browser page lives; nil means "find `Public/` near the working directory or the executable".
    public var publicDirectory: String?
    /// Receives every job's webhook notices (`--webhook-url`): an http(s) URL, normalized, userinfo kept.
    public var webhookURL: String?
    /// Signs webhook notices (`--webhook-secret`, `whsec_` + base64); nil: the one kept in the spool (made if none).
    public var webhookSecret: String?
    /// Seconds before a notice's first retry (5). Tests shorten it with `FERRY_WEBHOOK_RETRY_BASE` (no flag).
    public var webhookRetryBase: Double = 5
    /// Bytes per part of an object-store upload (the engine's `objectPartSize`, 16 MiB; at least 5 MiB). Tests make
    /// parts small with `FERRY_OBJECT_PART_SIZE` (no flag), so a handover is seen on files of a few parts.
    public var objectPartSize: Int64 = 16 << 20
    /// The known-hosts file SFTP sources' host keys are checked against (`--ssh-known-hosts`; `~/` is `$HOME`).
    public var sshKnownHosts: String = ServiceConfiguration.homeDirectory + "/.ssh/known_hosts"

    /// The host name (`gethostname`), the default node id.
    public static var hostName: String {
        let name = ProcessInfo.processInfo.hostName
        return name.isEmpty ? "ferry" : name
    }

    /// `$HOME`, as OpenSSH and libcurl read it (its key file, `~/.ssh/id_rsa`, too), else the account's home.
    public static var homeDirectory: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        return NSHomeDirectory()
    }
    /// Fetch-through (`--fetch-allow`, `--fetch-max-age`, `--fetch-stale-if-error`, `--cache-key-ignore`): off until
    /// an origin is allowed.
    public var fetch = FetchSettings()
    /// How much is logged (`--log-level`): one of `logLevels`.
    public var logLevel = "info"
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error"]
    /// Longest a graceful stop may take before remaining work is abandoned (API.md: exit within 10 s).
    public var shutdownGrace: Double = 8

    public init() {}

    /// True when `host` only accepts connections from this machine.
    public var isLoopbackHost: Bool {
        let h = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        if h == "localhost" || h == "::1" { return true }
        if let address = IPAddress(h) { return AddressPolicy.classify(address) == .loopback }
        return false
    }
}
