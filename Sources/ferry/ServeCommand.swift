import ArgumentParser
import Foundation
import FerryService
import Logging

/// `ferry serve`: runs the service until SIGTERM or SIGINT. Every option has an environment twin
/// (`--max-concurrent` / `FERRY_MAX_CONCURRENT`); a flag wins over its variable.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Ferry service (REST API, event streams, browser page)."
    )

    @Option(help: "Address to listen on (FERRY_HOST; default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on, 0 for any (FERRY_PORT; default 8080).") var port: String?
    @Option(help: "Spool directory for files and state (FERRY_SPOOL; default ./spool).") var spool: String?
    @Option(help: "Where jobs are kept: sqlite (ferry.db in the spool) or a PostgreSQL URL, postgres://user:password@host:5432/database (FERRY_STORE; default sqlite).")
    var store: String?
    @Option(name: .customLong("object-store"),
            help: "Keep finished files in an S3-compatible bucket, s3://bucket/prefix?endpoint=https://host:port&region=us-east-1, with the keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (FERRY_OBJECT_STORE; default none: files stay in the spool).")
    var objectStore: String?
    @Option(name: .customLong("node-id"),
            help: "This node's name among the nodes sharing a PostgreSQL store (FERRY_NODE_ID; default the host name).")
    var nodeID: String?
    @Option(help: "Lease of a node and of the jobs it runs, renewed every third of it; a node that stops renewing loses its jobs to the others after it (FERRY_LEASE; default 15s; PostgreSQL store only).")
    var lease: String?
    @Option(help: "API token (FERRY_TOKEN). Generated when listening beyond loopback without one.") var token: String?
    @Option(name: .customLong("read-token"),
            help: "A second token that may only read: GET, HEAD, event streams, content, metrics (FERRY_READ_TOKEN; needs a token).")
    var readToken: String?
    @Option(name: .customLong("max-concurrent"), help: "Downloads running at once (FERRY_MAX_CONCURRENT; default 4).")
    var maxConcurrent: String?
    @Option(name: .customLong("max-bytes-per-second"),
            help: "Speed limit over all downloads together, e.g. 10MiB (FERRY_MAX_BYTES_PER_SECOND; default none). With --max-concurrent, a starting value: PATCH /api/v1/settings changes both and its values are kept and win at later starts.")
    var maxBytesPerSecond: String?
    @Option(name: .customLong("max-per-host"),
            help: "Connections to one host at once, segments included (FERRY_MAX_PER_HOST; default 6).")
    var maxPerHost: String?
    @Flag(name: .customLong("allow-private-networks"),
          help: "Allow loopback, private and link-local destinations (FERRY_ALLOW_PRIVATE_NETWORKS=1).")
    var allowPrivateNetworks = false
    @Option(name: .customLong("allow-network"),
            help: "Allow one non-public block as a destination, e.g. 127.0.0.1/32; repeatable (FERRY_ALLOW_NETWORKS, a comma list).")
    var allowNetwork: [String] = []
    @Option(name: .customLong("proxy"),
            help: "An http://, https:// or socks5h:// proxy (with its port) for origins, deliveries and webhooks; Ferry still resolves and checks each destination and has the proxy connect to that address (FERRY_PROXY; default none; http_proxy, https_proxy and ALL_PROXY are ignored).")
    var proxy: String?
    @Option(name: .customLong("max-file-size"), help: "Largest file accepted, e.g. 10GiB (FERRY_MAX_FILE_SIZE).")
    var maxFileSize: String?
    @Option(name: .customLong("min-free-space"), help: "Free space reserve; below it downloads wait (FERRY_MIN_FREE_SPACE; default 1GiB).")
    var minFreeSpace: String?
    @Option(name: .customLong("spool-quota"), help: "Bytes the spool may hold (FERRY_SPOOL_QUOTA).")
    var spoolQuota: String?
    @Option(help: "Remove ended jobs older than this, e.g. 7d (FERRY_RETENTION).") var retention: String?
    @Option(name: .customLong("public"), help: "Directory of the browser page (FERRY_PUBLIC; default ./Public).")
    var publicDirectory: String?
    @Option(name: .customLong("webhook-url"),
            help: "Receiver of every job's signed completion notices, an http(s) URL (FERRY_WEBHOOK_URL; default none).")
    var webhookURL: String?
    @Option(name: .customLong("webhook-secret"),
            help: "Standard Webhooks signing secret, whsec_ + base64 (FERRY_WEBHOOK_SECRET; default: generated once, kept in the spool as webhook-secret and logged).")
    var webhookSecret: String?
    @Option(name: .customLong("ssh-known-hosts"),
            help: "Known-hosts file SFTP servers' host keys must be in; an unknown or changed key fails the job with host_key_unknown (FERRY_SSH_KNOWN_HOSTS; default ~/.ssh/known_hosts).")
    var sshKnownHosts: String?
    @Option(name: .customLong("fetch-allow"),
            help: "Turn on fetch-through (GET /fetch/<scheme>/<host>[:<port>]/<path>) for an origin: a host, *.domain, either with :port, or *; repeatable (FERRY_FETCH_ALLOW, a comma list; default none: /fetch is off).")
    var fetchAllow: [String] = []
    @Option(name: .customLong("fetch-max-age"),
            help: "How long a fetched file is fresh when its origin says nothing (FERRY_FETCH_MAX_AGE; default 1h).")
    var fetchMaxAge: String?
    @Option(name: .customLong("fetch-stale-if-error"),
            help: "How long past its freshness a fetched file is still served when its origin cannot be reached (FERRY_FETCH_STALE_IF_ERROR; default 1d).")
    var fetchStaleIfError: String?
    @Option(name: .customLong("cache-key-ignore"),
            help: "A query parameter left out of fetch-through's cache key and job dedupe, beside the presigning ones; repeatable (FERRY_CACHE_KEY_IGNORE, a comma list).")
    var cacheKeyIgnore: [String] = []
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error (FERRY_LOG_LEVEL; default info).")
    var logLevel: String?

    func run() async throws {
        var flags: [ServiceConfiguration.Setting: String] = [:]
        flags[.host] = host
        flags[.port] = port
        flags[.spool] = spool
        flags[.store] = store
        flags[.objectStore] = objectStore
        flags[.nodeID] = nodeID
        flags[.lease] = lease
        flags[.token] = token
        flags[.readToken] = readToken
        flags[.maxConcurrent] = maxConcurrent
        flags[.maxBytesPerSecond] = maxBytesPerSecond
        flags[.maxPerHost] = maxPerHost
        if allowPrivateNetworks { flags[.allowPrivateNetworks] = "1" }
        if !allowNetwork.isEmpty { flags[.allowNetwork] = allowNetwork.joined(separator: ",") }
        flags[.proxy] = proxy
        flags[.maxFileSize] = maxFileSize
        flags[.minFreeSpace] = minFreeSpace
        flags[.spoolQuota] = spoolQuota
        flags[.retention] = retention
        flags[.publicDirectory] = publicDirectory
        flags[.webhookURL] = webhookURL
        flags[.webhookSecret] = webhookSecret
        flags[.sshKnownHosts] = sshKnownHosts
        if !fetchAllow.isEmpty { flags[.fetchAllow] = fetchAllow.joined(separator: ",") }
        flags[.fetchMaxAge] = fetchMaxAge
        flags[.fetchStaleIfError] = fetchStaleIfError
        if !cacheKeyIgnore.isEmpty { flags[.cacheKeyIgnore] = cacheKeyIgnore.joined(separator: ",") }
        let environment = ProcessInfo.processInfo.environment
        let configuration: ServiceConfiguration
        do {
            configuration = try ServiceConfiguration.resolve(flags: flags, environment: environment)
        } catch {
            throw ValidationError(error.description)
        }
        let level = Logger.Level(rawValue: (logLevel ?? environment["FERRY_LOG_LEVEL"] ?? "info").lowercased()) ?? .info
        // StreamLogHandler's format, written in batches: one write per batch, not per access log line.
        LoggingSystem.bootstrap { label in
            var handler = BatchedLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        defer { BatchedLog.standardError.flush() }
        try await FerryService.run(configuration: configuration, logger: Logger(label: "ferry"))
    }
}
