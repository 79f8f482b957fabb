import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation
import Logging

extension RunningService {
    /// Builds every part from `configuration` in dependency order (spool, store, event hub, commit
    /// pipeline, engine, supervisor, routes, server), recovers interrupted jobs, and returns once the
    /// server listens.
    static func start(configuration: ServiceConfiguration, logger: Logger) async throws -> RunningService {
        if configuration.managesProcessMemory { FreeMemory.configureAllocator() }
        let spool = try Spool(root: configuration.spool)
        if configuration.readToken != nil, configuration.token == nil, configuration.isLoopbackHost {
            throw ServiceError.startup("--read-token needs --token: without a token the API is open to local callers, so a read-only token would restrict nothing")
        }

        // The bucket and its keys, before anything is opened that a missing key would leave open.
        let objectStore = try configuration.objectStore.map { text in try objectStoreSetting(text) }
        let ballast = StoreBallast(spoolRoot: spool.root)
        let (store, highWater) = try await openStore(configuration.store, spool: spool, ballast: ballast, logger: logger)
        // Several nodes: stored events get their ids in the database and are published as the feed reads them.
        let cluster: (store: any ClusterJobStore, location: PostgresLocation)? = switch configuration.store {
        case .postgres(let location): (store as? any ClusterJobStore).map { ($0, location) }
        case .sqlite: nil
        }
        // Heartbeats and renewals get a connection of their own: a commit waiting on the other must not delay them.
        let renewals: PostgresJobStore?
        do {
            renewals = if let cluster { try await PostgresJobStore(location: cluster.location) } else { nil }
        } catch {
            await store.close()
            throw ServiceError.startup("cannot open a second connection to the PostgreSQL store \(configuration.store) for lease renewals: \(error)")
        }
        // Several nodes share a generated token (and the webhook and session secrets) through the store.
        let token: String? = if let given = configuration.token {
            given
        } else if configuration.isLoopbackHost {
            nil
        } else {
            try await TokenFile.resolve(spool: spool.root, shared: cluster?.store, logger: logger)
        }
        if let readToken = configuration.readToken, readToken == token {
            throw ServiceError.startup("--read-token must differ from --token")
        }
        var storedEventsAfter: Int64 = 0
        let ids: EventIDAllocator
        if let cluster {
            try await ClusterMembership.join(store: cluster.store, configuration: configuration, logger: logger)
            let window = try await cluster.store.eventWindow()
            storedEventsAfter = max(window.purgedThrough, window.latest - Int64(EventLog.defaultCapacity))
            ids = EventIDAllocator(startingAfter: ClusterEventID.published(storedEventsAfter), block: ClusterEventID.block)
        } else {
            ids = EventIDAllocator(startingAfter: highWater.startAfter)
        }
        let metrics = ServiceMetrics()
        // Several nodes: whether this node's leases were renewed lately enough to act on its jobs.
        let fence = cluster.map { _ in LeaseFence(lease: configuration.lease) }
        // ...and the epochs it took its jobs under, which its writes for them carry.
        let held = HeldEpochs()
        let claimedUploads = ClaimedUploadRecords()
        let hub = EventHub(ids: ids, logger: logger)
        let feed = cluster.map { ClusterEventFeed(store: $0.store, hub: hub, ids: ids, after: storedEventsAfter, logger: logger) }
        let (refusals, refused) = AsyncStream<[String: String]>.makeStream()
        let (wants, wantsMore) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Webhooks: notices are committed with the job changes that cause them; the sender delivers them.
        let webhookSecret = try await WebhookSecret.resolve(configured: configuration.webhookSecret, spool: spool.root,
                                                          shared: cluster?.store, logger: logger)
        let noticesAtOnce = 16
        let requests = RequestRunner(limits: RequestRunner.Limits(destinations: configuration.destinations, proxy: configuration.proxy),
                                     connections: noticesAtOnce)
        let webhooks = WebhookSender(store: JobStoreNotices(store: store), send: { await requests.send($0) }, key: webhookSecret.key,
                                     schedule: WebhookSchedule(base: configuration.webhookRetryBase),
                                     metrics: metrics, logger: logger, concurrency: noticesAtOnce,
                                     mayAct: { fence?.holds() ?? true })
        let relay = cluster.map { ProgressRelay(store: $0.store, node: configuration.nodeID, logger: logger) }
        let commitCluster = zip(cluster, zip(feed, relay)).map { cluster, parts in
            CommitPipeline.Cluster(store: cluster.store, node: configuration.nodeID, feed: parts.0, relay: parts.1,
                                   refused: { refused.yield($0) }, held: held)
        }
        let commits = CommitPipeline(store: store, cluster: commitCluster, logger: logger, makeRoom: { ballast.release() },
                                     noticesStored: { webhooks.committed($0) }, beforePublish: { events in
            try await highWater.cover(events.last?.id ?? 0)
        }, publish: { hub.publish($0) })

        // Settings changed through the API (kept in the store) win over the flags' starting values.
        let startingSettings = try await LiveSettings.starting(
            flags: RuntimeSettings(maxBytesPerSecond: configuration.maxBytesPerSecond, maxConcurrent: configuration.maxConcurrent),
            store: store, logger: logger)
        var engineConfiguration = EngineConfiguration()
        engineConfiguration.maxConcurrent = startingSettings.maxConcurrent
        engineConfiguration.globalMaxBytesPerSecond = startingSettings.maxBytesPerSecond
        engineConfiguration.maxPerHost = configuration.maxPerHost
        engineConfiguration.destinations = configuration.destinations
        engineConfiguration.proxy = configuration.proxy
        engineConfiguration.maxFileSize = configuration.maxFileSize
        engineConfiguration.minFreeSpace = configuration.minFreeSpace
        engineConfiguration.sshKnownHosts = configuration.sshKnownHosts
        engineConfiguration.objectPartSize = configuration.objectPartSize
        let engineEvents = TransferEventMailbox()
        let table = JobTable()
        let quota = configuration.spoolQuota.map { SpoolQuota(quota: $0, table: table) }
        // API keys work only beside a token (the administrator's); each key's spoolBytes is checked with the quota.
        let keys = token == nil ? KeyRing() : KeyRing(try await store.keys())
        let allowance: (any SpoolAllowance)? = token == nil ? quota : KeySpoolQuota(inner: quota, keys: keys, table: table)
        let engine = DownloadEngine(configuration: engineConfiguration, spool: spool, logger: logger, allowance: allowance,
                                    objectStore: objectStore,
                                    uploadLedger: cluster.map { ClusterUploadLedger(store: $0.store, node: configuration.nodeID, fence: fence, held: held, claimed: claimedUploads,
                                                                                    metrics: metrics, logger: logger) }) { event in
            engineEvents.post(event)
        }
        if let client = engine.objectStore {
            do throws(ObjectStoreError) {
                try await client.checkBucket()
            } catch {
                await engine.shutdown()
                await store.close()
                throw ServiceError.startup("cannot use the object store \(client.location): \(error.startupReason)")
            }
            logger.info("finished files go to the object store", metadata: ["objectStore": "\(client.location)"])
        }
        let wantsWork: @Sendable () -> Void = { wantsMore.yield() }
        let settings = LiveSettings(current: startingSettings, store: store, logger: logger) { settings in
            engine.setGlobalMaxBytesPerSecond(settings.maxBytesPerSecond)
            engine.setMaxConcurrent(settings.maxConcurrent)
            // One node of several: more slots are claimed at once, not at the next heartbeat.
            if cluster != nil { wantsWork() }
        }
        // Progress is sampled at the finest interval an open stream asks for (never less often than the default).
        let defaultSampling = engineConfiguration.progressInterval
        hub.queue.sync {
            hub.onFinestIntervalChange = { milliseconds in
                engine.setProgressInterval(milliseconds.map { min(defaultSampling, Double($0) / 1000) } ?? defaultSampling)
            }
        }

        // Each key's share of the slots holds before recovery hands its jobs to the engine.
        let applyLimits: @Sendable (String, APIKeyRecord.Limits?) -> Void = { id, limits in
            engine.setGroupCap(limits?.maxActiveJobs.map { Int(clamping: $0) }, group: id)
            engine.setGroupRate(limits?.maxBytesPerSecond, group: id)
        }
        for id in keys.ids() { applyLimits(id, keys.key(id: id)?.limits) }
        let fetchCache = FetchCache(settings: configuration.fetch, store: configuration.fetch.isOn ? store : nil)
        var dependencies = JobSupervisor.Dependencies(
            store: store, engine: engine, files: engine, ids: ids, commits: commits, metrics: metrics,
            logger: logger, table: table, quota: quota, webhooks: WebhookOutbox(globalURL: configuration.webhookURL))
        dependencies.eventsApplied = { await engineEvents.barrier() }
        if configuration.fetch.isOn {
            dependencies.onResponded = { job, metadata in fetchCache.responded(job, metadata) }
            // A fetch job deleted through the API or by `--retention` takes its entry with it (it used to stay).
            hub.tap { events in
                for event in events where event.kind == .removed { event.jobID.map { fetchCache.forget(jobID: $0) } }
            }
        }
        dependencies.keys = keys
        dependencies.keyRule = configuration.fetch.keyRule
        if let cluster {
            dependencies.role = NodeRole(store: cluster.store, node: configuration.nodeID, lease: configuration.lease,
                                         wantsWork: wantsWork, fence: fence, held: held, claimedUploads: claimedUploads)
            // The supervisor's own ids only number placeholders: the feed publishes with the stored ids.
            dependencies.ids = EventIDAllocator(startingAfter: 0)
            dependencies.publishedMark = { ids.lastAllocated }
        }
        let supervisor = JobSupervisor(dependencies)
        await feed?.onBlockFilling { Task { await supervisor.checkpoint() } }
        let eventPump = Task {
            await engineEvents.deliver { await supervisor.apply($0) }
        }
        // Keys' `bytesPerDay` windows as stored, before recovery hands their jobs to the engine.
        await supervisor.syncDailyBytes()
        try await supervisor.recover()
        // Reading every row freed many small buffers (SQLite's, the decoder's): give the pages back.
        if configuration.managesProcessMemory { FreeMemory.returnToSystem() }
        if configuration.fetch.isOn {
            fetchCache.load(try await store.fetchEntries(), jobs: Set(supervisor.table.jobs.values.map(\.id)))
        }
        await feed?.catchUp()
        let access = try await AccessGuard.open(token: token, readToken: configuration.readToken, port: configuration.port,
                                                spool: spool.root, store: store, shared: cluster?.store, keys: keys,
                                                logger: logger)
        let keyDirectory = KeyDirectory(store: store, ring: keys, closeStreams: { hub.closeStreams(ofKey: $0) },
                                        limitsChanged: { id, limits in
                                            applyLimits(id, limits)
                                            Task { await supervisor.keyLimitsChanged(id) }
                                        }, logger: logger)
        let membership = zip(cluster, zip(feed, zip(relay, zip(renewals, fence)))).map { cluster, parts in
            ClusterMembership(store: cluster.store, renewals: parts.1.1.0, fence: parts.1.1.1, location: cluster.location,
                              configuration: configuration,
                              supervisor: supervisor, feed: parts.0, relay: parts.1.0, sessions: access.sessions, keys: keyDirectory,
                              settings: settings, wants: wants, wantsWork: wantsWork, refused: refusals, logger: logger)
        }
        await webhooks.start()

        let router = Router()
        // Made before the routes are registered (it serves nothing until `start()`), so that the
        // metrics route can read its connection count.
        let server = makeServer(configuration: configuration, logger: logger, router: router, access: access, metrics: metrics)
        let routes = RouteTable(router: router, metrics: metrics)
        JobsController(supervisor: supervisor, store: store, idempotency: IdempotencyGate(),
                       destinations: configuration.destinations, keyRule: configuration.fetch.keyRule).register(routes)
        let content = ContentController(supervisor: supervisor, spool: spool, objects: engine.objectStore)
        content.register(routes)
        FetchController(supervisor: supervisor, content: content, spool: spool, access: access, cache: fetchCache,
                        destinations: configuration.destinations, counters: metrics.fetch).register(routes)
        EventsController(supervisor: supervisor, hub: hub, clusterFeed: feed).register(routes)
        SessionController(access: access).register(routes)
        KeysController(keys: keyDirectory, enabled: token != nil).register(routes)
        NoticesController(store: store, supervisor: supervisor, webhooks: webhooks).register(routes)
        SettingsController(settings: settings).register(routes)
        Aria2Controller(supervisor: supervisor, settings: settings, access: access, destinations: configuration.destinations,
                        directory: String(spool.finishedPath(for: "").dropLast()), hub: hub).register(routes)
        OperationsController(supervisor: supervisor, store: store, spool: spool, commits: commits, hub: hub,
                             metrics: metrics, minFreeSpace: configuration.minFreeSpace, objects: engine.objectStore,
                             openConnections: { server.openConnectionCount },
                             reportsHeap: configuration.managesProcessMemory).register(routes)
        if let publicDirectory = publicDirectory(configuration.publicDirectory) {
            router.fallback = staticFallback(StaticFiles(root: publicDirectory))
        } else {
            logger.warning("no Public/ directory found: the browser page is not served (set --public)")
        }

        let ports = try server.start()
        if let bound = ports.first { access.setPort(bound) }
        if let opened = configuration.destinations.openedDescription {
            logger.warning("destination guard relaxed: downloads may reach \(opened)")
        }
        if let proxy = configuration.proxy {
            logger.notice("origins, deliveries and webhooks go through the proxy \(proxy.redacted); Ferry checks each destination and pins it")
        }
        if access.isOpen {
            logger.notice("no token configured: the API is open to local callers on \(configuration.host)")
        }
        logger.info("Ferry listening", metadata: [
            "host": "\(configuration.host)", "port": "\(ports.first ?? configuration.port)", "spool": "\(spool.root)",
        ])
        var chores = startChores(configuration: configuration, spool: spool, ballast: ballast, store: store,
                                 supervisor: supervisor, logger: logger)
        chores.append(Task {
            // API keys' `lastUsedAt`, written in batches (the guard only notes uses), and what their transfers
            // fetched (`bytesPerDay`, counted across nodes and restarts).
            while !Task.isCancelled {
                try? await Task.sleep(for: DailyByteQuota.syncInterval)
                await keyDirectory.saveUses()
                await supervisor.syncDailyBytes()
            }
        })
        if let cluster {
            // A key's `maxBytesPerSecond` shared between the nodes running its jobs.
            let shares = KeyRateShares(store: cluster.store, node: configuration.nodeID, keys: keys, engine: engine,
                                       logger: logger)
            chores.append(Task { await shares.run() })
        }
        return RunningService(store: store, engine: engine, supervisor: supervisor, hub: hub, commits: commits, server: server, router: router,
                              engineEvents: engineEvents, eventPump: eventPump, chores: chores, membership: membership,
                              webhooks: webhooks, requests: requests,
                              leaseSeconds: Double(configuration.lease.components.seconds) + Double(configuration.lease.components.attoseconds) / 1e18,
                              fetchCache: configuration.fetch.isOn ? fetchCache : nil,
                              memory: configuration.managesProcessMemory ? MemoryReturner() : nil)
    }

    /// The bucket and keys of `--object-store` (the value was checked when resolved; the keys are read here).
    private static func objectStoreSetting(_ text: String) throws -> (location: ObjectStoreLocation, credentials: ObjectStoreCredentials) {
        do {
            return (try ObjectStoreLocation(parsing: text), try ObjectStoreCredentials.fromEnvironment(ProcessInfo.processInfo.environment))
        } catch {
            throw ServiceError.startup("\(error)")
        }
    }

    /// Both values, or nil.
    private static func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
        guard let a, let b else { return nil }
        return (a, b)
    }

    /// Opens the job store `setting` names (SQLite in the spool, or PostgreSQL) and loads the event-id
    /// high-water mark. On a full disk SQLite cannot open its WAL or write the mark: the store's ballast is
    /// released and the open tried once more, so Ferry starts (and reports `disk_full`) instead of exiting.
    /// A PostgreSQL server that cannot be reached fails the start with libpq's reason and the URL without its password.
    private static func openStore(_ setting: StoreSetting, spool: Spool, ballast: StoreBallast,
                                  logger: Logger) async throws -> (any JobStore, EventIDHighWater) {
        func open() async throws -> (any JobStore, EventIDHighWater) {
            let store: any JobStore
            switch setting {
            case .sqlite:
                store = try await SQLiteJobStore(path: spool.root + "/ferry.db")
            case .postgres(let location):
                do {
                    store = try await PostgresJobStore(location: location)
                } catch let error as JobStoreError where error.isUnavailable {
                    throw ServiceError.startup("cannot connect to the PostgreSQL store: \(error)")
                }
                logger.info("job store: PostgreSQL", metadata: ["store": "\(location.redacted)"])
            }
            do {
                return (store, try await EventIDHighWater.load(store: store))
            } catch {
                await store.close()
                throw error
            }
        }
        do {
            return try await open()
        } catch let error as JobStoreError where error.isOutOfSpace && ballast.release() {
            logger.warning("the disk is full: released the store's ballast to start", metadata: ["error": "\(error)"])
            return try await open()
        }
    }

    /// Raises the soft limit on open descriptors to the hard limit; returns the limit now in force.
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, 1 << 20))
    }

    /// `--public`, else `Public/` in the working directory, else next to the executable's package.
    static func publicDirectory(_ configured: String?) -> String? {
        var candidates: [String] = []
        if let configured { candidates.append(configured) }
        candidates.append(FileManager.default.currentDirectoryPath + "/Public")
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").resolvingSymlinksInPath().deletingLastPathComponent()
        candidates.append(executable.appendingPathComponent("../share/ferry/Public").standardizedFileURL.path)
        candidates.append(executable.appendingPathComponent("../../../Public").standardizedFileURL.path)
        var isDirectory: ObjCBool = false
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/index.html", isDirectory: &isDirectory) }
    }
}
