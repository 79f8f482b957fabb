extension ServeOption {
    /// Every option of `ferry serve`, in the order `--help` and the documents list them.
    public static let all: [ServeOption] = [
        ServeOption(.host, .value("ADDRESS"), default: .value("127.0.0.1"),
                    summary: "Address to listen on.",
                    details: "`127.0.0.1` (the Docker image sets `0.0.0.0`)"),
        ServeOption(.port, .value("PORT"), default: .value("8080"),
                    summary: "Port to listen on, 0 for any.",
                    details: "`8080` (`0`: any free port)"),
        ServeOption(.spool, .value("DIR"), default: .value("./spool"),
                    summary: "Spool directory for files and state.",
                    details: "`./spool` (the Docker image uses the volume `/var/spool/ferry`)"),
        ServeOption(.store, .value("STORE"), default: .value("sqlite"),
                    summary: """
                        Where jobs are kept: sqlite (ferry.db in the spool) or a PostgreSQL URL, \
                        postgres://user:password@host:5432/database.
                        """,
                    details: """
                        `sqlite`: jobs in `ferry.db` in the spool; or a PostgreSQL URL, \
                        `postgres://user:password@host:5432/database` (libpq's URL form: `postgresql://` too, and options \
                        such as `?sslmode=require`). The schema is created and migrated at start; an unreachable server \
                        stops Ferry at start with one line naming it. The password is never logged or shown (`***@`)
                        """),
        ServeOption(.objectStore, .value("URL"), default: .none,
                    summary: """
                        Keep finished files in an S3-compatible bucket, \
                        s3://bucket/prefix?endpoint=https://host:port&region=us-east-1, with the keys from AWS_ACCESS_KEY_ID \
                        and AWS_SECRET_ACCESS_KEY.
                        """,
                    details: """
                        none: finished files stay in the spool. An S3-compatible bucket, \
                        `s3://bucket/prefix?endpoint=https://host:port&region=us-east-1` (endpoint default \
                        `https://s3.<region>.amazonaws.com`, region default `us-east-1`), with the keys from \
                        `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`. Each finished file is stored as the object \
                        `<prefix>/<job id>/<filename>` (its SHA-256 as `x-amz-meta-sha256`) before the job is `finished`; \
                        the content endpoint reads it from there on any node; `DELETE` and retention remove it. At start the \
                        bucket is checked: an unreachable store, a missing bucket or refused keys end the start with one \
                        line saying which. A store failing later is retried (the job stays `downloading`, with every byte \
                        received and `error.code` `retrying` naming the object store and saying when it is tried again); \
                        refused keys fail the job with `internal`
                        """),
        ServeOption(.nodeID, .value("NAME"), default: .described("the host name"),
                    summary: "This node's name among the nodes sharing a PostgreSQL store.",
                    details: """
                        the host name; this node's name among the nodes sharing a PostgreSQL store (one line, no commas, up \
                        to 200 bytes). A start under an id another live process uses (its heartbeat goes on) is refused with \
                        one line; a restart after a crash waits at most a third of `--lease` and a second to tell the two \
                        apart. See [Several nodes](#several-nodes)
                        """),
        ServeOption(.lease, .value("DURATION"), default: .value("15s"),
                    summary: """
                        Lease of a node and of the jobs it runs, renewed every third of it; a node that stops renewing loses \
                        its jobs to the others after it.
                        """,
                    details: """
                        `15s` (1 s to 1 h); how long a node's heartbeat and its jobs' leases last: it renews them every \
                        third of it, and a node that stops renewing loses its jobs to the others this long after its last \
                        renewal (plus a claim round, a third of the others' lease)
                        """),
        ServeOption(.token, .value("TOKEN"), default: .described("generated when listening beyond loopback"),
                    summary: "API token Generated when listening beyond loopback without one.",
                    details: "none; generated and kept in the spool when listening beyond loopback"),
        ServeOption(.readToken, .value("TOKEN"), default: .none,
                    summary: "A second token that may only read: GET, HEAD, event streams, content, metrics.",
                    details: """
                        none; a second token that may only read (`GET`, `HEAD`: lists, event streams, content, metrics); \
                        anything else with it is `403 forbidden`. Needs a token (see [Authentication](#authentication))
                        """),
        ServeOption(.maxConcurrent, .value("N"), default: .value("4"),
                    summary: "Downloads running at once.",
                    details: """
                        `4` downloads at once (1 to 1024); the rest wait. The starting value: see [Settings](#settings)
                        """),
        ServeOption(.maxBytesPerSecond, .value("SPEED"), default: .none,
                    summary: """
                        Speed limit over all downloads together, e.g. 10MiB With --max-concurrent, a starting value: PATCH \
                        /api/v1/settings changes both and its values are kept and win at later starts.
                        """,
                    details: """
                        none; a speed limit over all downloads together, a size per second (`500K`, `10MiB`); a job's own \
                        `maxBytesPerSecond` still applies within it. The starting value: a value set with `PATCH \
                        /api/v1/settings` wins (see [Settings](#settings))
                        """),
        ServeOption(.maxPerHost, .value("N"), default: .value("6"),
                    summary: "Connections to one host at once, segments included.",
                    details: "`6` connections to one host at once, segments included (1 to 64)"),
        ServeOption(.allowPrivateNetworks, .flag, default: .described("off"),
                    summary: "Allow loopback, private and link-local destinations.",
                    details: "off: see [Destinations](#destinations)"),
        ServeOption(.allowNetwork, .list("CIDR"), default: .none,
                    summary: "Allow one non-public block as a destination, e.g. 127.0.0.1/32; repeatable.",
                    details: """
                        none: a CIDR block allowed as a destination though not public; repeat the flag for several, or give \
                        the variable a comma list (`127.0.0.1/32,10.1.0.0/16`)
                        """),
        ServeOption(.proxy, .value("URL"), default: .none,
                    summary: """
                        An http://, https:// or socks5h:// proxy (with its port) for origins, deliveries and webhooks; Ferry \
                        still resolves and checks each destination and has the proxy connect to that address.
                        """,
                    details: """
                        none: an `http://`, `https://` or `socks5h://` proxy URL with its port (credentials in it are never \
                        logged: `***@`) for origins, deliveries and webhooks. The `http_proxy`, `https_proxy`, `ALL_PROXY` \
                        and `no_proxy` variables are ignored. Behind the proxy the destination guard still holds: Ferry \
                        resolves each destination (and each redirect's) itself, checks the addresses, and has the proxy \
                        connect to the checked one (`CONNECT address:port`, plain `http` too; TLS still checks the host \
                        name), so a private name behind the proxy is refused with `forbidden_destination`. A proxy answering \
                        garbage is a retried `network_error` naming the proxy
                        """),
        ServeOption(.maxFileSize, .value("SIZE"), default: .none,
                    summary: "Largest file accepted, e.g. 10GiB.",
                    details: "none; a larger file fails with `file_too_large`"),
        ServeOption(.minFreeSpace, .value("SIZE"), default: .value("1GiB"),
                    summary: "Free space reserve; below it downloads wait.",
                    details: "`1GiB`; below it downloads wait with `disk_full` and continue when space returns"),
        ServeOption(.spoolQuota, .value("SIZE"), default: .none,
                    summary: "Bytes the spool may hold.",
                    details: "none; bytes the spool may hold (see `quota_exceeded`)"),
        ServeOption(.retention, .value("DURATION"), default: .none,
                    summary: "Remove ended jobs older than this, e.g. 7d.",
                    details: """
                        none; e.g. `7d`: ended jobs older than that are removed with their files (checked every quarter of \
                        the period, at least once a minute)
                        """),
        ServeOption(.publicDirectory, .value("DIR"), default: .value("./Public"),
                    summary: "Directory of the browser page.",
                    details: """
                        the browser page's directory: `./Public`, else `../share/ferry/Public` beside the executable (where \
                        `make install` puts it), else the repository's `Public/` for a build in `.build/`
                        """),
        ServeOption(.webhookURL, .value("URL"), default: .none,
                    summary: "Receiver of every job's signed completion notices, an http(s) URL.",
                    details: """
                        none; an `http` or `https` URL receiving every job's [webhook notices](#webhooks) (the destination \
                        guard applies)
                        """),
        ServeOption(.webhookSecret, .value("SECRET"), default: .described("generated once, kept in the spool as webhook-secret and logged"),
                    summary: "Standard Webhooks signing secret, whsec_ + base64.",
                    details: """
                        generated at the first start, kept in the spool as `webhook-secret` and logged; `whsec_` + base64, \
                        the key that signs notices
                        """),
        ServeOption(.sshKnownHosts, .value("FILE"), default: .value("~/.ssh/known_hosts"),
                    summary: """
                        Known-hosts file SFTP servers' host keys must be in; an unknown or changed key fails the job with \
                        host_key_unknown.
                        """,
                    details: """
                        `~/.ssh/known_hosts` (of `$HOME`); the known-hosts file an `sftp` server's host key must be in, else \
                        the job fails with `host_key_unknown`; never written to
                        """),
        ServeOption(.fetchAllow, .list("ORIGIN"), default: .described("none: /fetch/ is off"),
                    summary: """
                        Turn on fetch-through (GET /fetch/<scheme>/<host>[:<port>]/<path>) for an origin: a host, *.domain, \
                        either with :port, or *; repeatable.
                        """,
                    details: """
                        none: [fetch-through](#fetch-through) is off. An origin `/fetch/` may reach: a host \
                        (`files.pythonhosted.org`), a wildcard for its subdomains (`*.debian.org`), either with `:port` \
                        where not the scheme's default, or `*` for every destination the guard allows; repeat the flag for \
                        several, or give the variable a comma list
                        """),
        ServeOption(.fetchMaxAge, .value("DURATION"), default: .value("1h"),
                    summary: "How long a fetched file is fresh when its origin says nothing.",
                    details: """
                        `1h`; how long a fetched file is fresh when its origin's `Cache-Control` and `Expires` say nothing
                        """),
        ServeOption(.fetchStaleIfError, .value("DURATION"), default: .value("1d"),
                    summary: """
                        How long past its freshness a fetched file is still served when its origin cannot be reached.
                        """,
                    details: """
                        `1d`; how long past its freshness a fetched file is still served (`Ferry-Cache: stale`) when its \
                        origin cannot be reached
                        """),
        ServeOption(.cacheKeyIgnore, .list("NAME"), default: .none,
                    summary: """
                        A query parameter left out of fetch-through's cache key and job dedupe, beside the presigning ones; \
                        repeatable.
                        """,
                    details: """
                        none; a query parameter left out of fetch-through's cache key and of job dedupe, beside the \
                        presigning ones (names in any case); repeat the flag for several, or give the variable a comma list
                        """),
        ServeOption(.logLevel, .value("LEVEL"), default: .value("info"),
                    summary: "trace, debug, info, notice, warning, error.",
                    details: "`info` (`trace`, `debug`, `info`, `notice`, `warning`, `error`)"),
    ]
}
