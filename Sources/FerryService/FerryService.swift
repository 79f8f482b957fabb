import Dispatch
import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation
import Logging

/// The running service: builds the spool, store, engine, supervisor, event hub and HTTP server
/// from a `ServiceConfiguration`, recovers interrupted jobs, serves until stopped, and stops in
/// the order that keeps every byte: stop accepting, close streams, stop transfers (bytes kept,
/// jobs not marked paused), write state, close the store.
///
/// Use `run(configuration:logger:)` from the command line; tests use `start()` and `stop()`.
public final class FerryService: @unchecked Sendable {
    public let configuration: ServiceConfiguration
    private let logger: Logger

    private var spool: Spool!
    private var store: (any JobStore)!
    private var engine: DownloadEngine!
    private var supervisor: JobSupervisor!
    private var hub: EventHub!
    private var commits: CommitPipeline!
    private var server: HTTPServer!
    private var eventPump: Task<Void, Never>?
    private var housekeeping: Task<Void, Never>?
    private var retentionSweep: Task<Void, Never>?
    private var ballastKeeper: Task<Void, Never>?
    private var engineEvents: AsyncStream<TransferEvent>.Continuation?

    public init(configuration: ServiceConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The port the server listens on (after `start`).
    public var port: Int? { server?.boundPort }

    /// Starts everything and returns once the server listens.
    public func start() async throws {
        FreeMemory.limitArenas()
        let configuration = configuration
        let spool = try Spool(root: configuration.spool)
        self.spool = spool
        let token: String? = if let given = configuration.token {
            given
        } else if configuration.isLoopbackHost {
            nil
        } else {
            try TokenFile.loadOrCreate(spool: spool.root, logger: logger)
        }

        let ballast = StoreBallast(spoolRoot: spool.root)
        let (store, highWater) = try await Self.openStore(spool: spool, ballast: ballast, logger: logger)
        self.store = store
        let ids = EventIDAllocator(startingAfter: highWater.startAfter)
        let metrics = ServiceMetrics()
        let hub = EventHub(ids: ids, logger: logger)
        self.hub = hub
        let commits = CommitPipeline(store: store, logger: logger, makeRoom: { ballast.release() }, beforePublish: { events in
            try await highWater.cover(events.last?.id ?? 0)
        }, publish: { hub.publish($0) })
        self.commits = commits

        var engineConfiguration = EngineConfiguration()
        engineConfiguration.maxConcurrent = configuration.maxConcurrent
        engineConfiguration.maxPerHost = configuration.maxPerHost
        engineConfiguration.destinations = configuration.destinations
        engineConfiguration.maxFileSize = configuration.maxFileSize
        engineConfiguration.minFreeSpace = configuration.minFreeSpace
        let (events, continuation) = AsyncStream<TransferEvent>.makeStream()
        engineEvents = continuation
        let table = JobTable()
        let quota = configuration.spoolQuota.map { SpoolQuota(quota: $0, table: table) }
        let engine = DownloadEngine(configuration: engineConfiguration, spool: spool, logger: logger, allowance: quota) { event in
            continuation.yield(event)
        }
        self.engine = engine
        // Progress is sampled at the finest interval an open stream asks for (never less often than the default).
        let defaultSampling = engineConfiguration.progressInterval
        hub.queue.sync {
            hub.onFinestIntervalChange = { milliseconds in
                engine.setProgressInterval(milliseconds.map { min(defaultSampling, Double($0) / 1000) } ?? defaultSampling)
            }
        }

        let supervisor = JobSupervisor(.init(
            store: store, engine: engine, files: engine, ids: ids, commits: commits, metrics: metrics,
            logger: logger, table: table, quota: quota))
        self.supervisor = supervisor
        eventPump = Task {
            for await event in events { await supervisor.apply(event) }
        }
        try await supervisor.recover()

        let access = try await AccessGuard.open(token: token, port: configuration.port, spool: spool.root, store: store, logger: logger)
        let router = Router()
        let routes = RouteTable(router: router, metrics: metrics)
        JobsController(supervisor: supervisor, store: store, idempotency: IdempotencyGate(),
                       destinations: configuration.destinations).register(routes)
        ContentController(supervisor: supervisor, spool: spool).register(routes)
        EventsController(supervisor: supervisor, hub: hub).register(routes)
        SessionController(access: access).register(routes)
        let serverBox = ServerBox()
        OperationsController(supervisor: supervisor, store: store, spool: spool, commits: commits, hub: hub,
                             metrics: metrics, minFreeSpace: configuration.minFreeSpace,
                             openConnections: { serverBox.server?.openConnectionCount ?? 0 }).register(routes)
        if let publicDirectory = Self.publicDirectory(configuration.publicDirectory) {
            let files = StaticFiles(root: publicDirectory)
            router.fallback = { request in
                if let response = await files.handle(request) { return response }
                throw APIError(.notFound, "nothing at \(request.path)")
            }
        } else {
            logger.warning("no Public/ directory found: the browser page is not served (set --public)")
        }

        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = configuration.host
        serverConfiguration.port = configuration.port
        // Event streams are long-lived connections: allow as many as the descriptor limit (raised to
        // its hard maximum) leaves room for, beside downloads, spool files and the store.
        serverConfiguration.maxConnections = max(1024, Self.raiseDescriptorLimit() - 1024)
        // The refusal when `AccessGuard` turns the request away, nil when it may proceed.
        let refusal: @Sendable (HTTPRequest) -> HTTPResponse? = { request in
            switch Result(catching: { () throws(APIError) in try access.check(request) }) {
            case .success: return nil
            case .failure(let refusal):
                metrics.request(route: "auth", method: request.method.rawValue, status: refusal.status.code)
                return refusal.response(for: request)
            }
        }
        // On the connection queue: `/healthz`, refusals, immediate routes (snapshot reads) and the router's
        // 404/405 are answered at once; everything else goes to the async handler on the concurrency pool.
        let health = OperationsController.immediate(metrics: metrics)
        let immediate: ImmediateResponder = { request in
            if let response = health(request) { return response }
            if let response = refusal(request) { return response }
            return router.respondImmediately(request)
        }
        let server = HTTPServer(configuration: serverConfiguration, logger: logger, immediate: immediate) { request in
            if let response = refusal(request) { return response }
            return await router.handle(request)
        }
        self.server = server
        serverBox.server = server
        let ports = try server.start()
        if let bound = ports.first { access.setPort(bound) }
        if let opened = configuration.destinations.openedDescription {
            logger.warning("destination guard relaxed: downloads may reach \(opened)")
        }
        if access.isOpen {
            logger.notice("no token configured: the API is open to local callers on \(configuration.host)")
        }
        logger.info("Ferry listening", metadata: [
            "host": "\(configuration.host)", "port": "\(ports.first ?? configuration.port)", "spool": "\(spool.root)",
        ])
        let minFreeSpace = configuration.minFreeSpace
        ballastKeeper = Task { [logger] in
            // Lays the store's ballast (back) down whenever there is room for it beyond the reserve.
            while !Task.isCancelled {
                if !ballast.isPresent, let free = spool.freeBytes(), free > minFreeSpace + 2 * ballast.size {
                    if ballast.ensure() { logger.info("store ballast in place", metadata: ["bytes": "\(ballast.size)"]) }
                }
                try? await Task.sleep(for: .seconds(10))
            }
        }
        housekeeping = Task { [store, logger] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(3600))
                do { try await store.purgeIdempotencyRecords(olderThan: Date().addingTimeInterval(-IdempotencyGate.keyLifetime)) }
                catch { logger.warning("purging idempotency records failed", metadata: ["error": "\(error)"]) }
            }
        }
        if let retention = configuration.retention {
            retentionSweep = Task { [logger] in
                while !Task.isCancelled {
                    do { _ = try await supervisor.purge(PurgeSelection(cutoff: Date().addingTimeInterval(-retention))) }
                    catch { logger.warning("retention sweep failed", metadata: ["error": "\(error)"]) }
                    try? await Task.sleep(for: .seconds(RetentionSchedule.interval(for: retention)))
                }
            }
        }
    }

    /// Stops in order; returns when state is saved. Safe to call once.
    public func stop() async {
        logger.info("stopping: no new connections; transfers keep their bytes")
        housekeeping?.cancel()
        retentionSweep?.cancel()
        ballastKeeper?.cancel()
        hub?.closeAll()
        async let serverDone: Void = server?.shutdown(grace: min(3, configuration.shutdownGrace)) ?? ()
        await engine?.shutdown()
        engineEvents?.finish()
        await eventPump?.value
        await commits?.flush()
        await serverDone
        await store?.close()
        logger.info("stopped")
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

    /// Opens the job store and loads the event-id high-water mark. On a full disk SQLite cannot open
    /// its WAL or write the mark: the store's ballast is released and the open tried once more, so Ferry
    /// starts (and reports `disk_full`) instead of exiting.
    private static func openStore(spool: Spool, ballast: StoreBallast, logger: Logger) async throws -> (SQLiteJobStore, EventIDHighWater) {
        func open() async throws -> (SQLiteJobStore, EventIDHighWater) {
            let store = try SQLiteJobStore(path: spool.root + "/ferry.db")
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

    /// Runs until SIGTERM or SIGINT, then stops gracefully (API.md, "Running").
    public static func run(configuration: ServiceConfiguration, logger: Logger) async throws {
        let service = FerryService(configuration: configuration, logger: logger)
        let signals = SignalWaiter([SIGTERM, SIGINT])
        try await service.start()
        let received = await signals.wait()
        logger.notice("received signal \(received)")
        await service.stop()
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

/// Lets the metrics route read the server's connection count although the server is made after
/// the routes.
private final class ServerBox: @unchecked Sendable {
    var server: HTTPServer?
}

/// Waits for one of the given signals through a Dispatch signal source (the default action is
/// switched off first, as Dispatch requires).
final class SignalWaiter: @unchecked Sendable {
    private let queue = DispatchQueue(label: "ferry.signals")
    private var sources: [DispatchSourceSignal] = []
    private var continuation: CheckedContinuation<Int32, Never>?
    private var received: Int32?

    init(_ signals: [Int32]) {
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.fire(number) }
            source.activate()
            sources.append(source)
        }
    }

    private func fire(_ number: Int32) {
        if received == nil { received = number }
        continuation?.resume(returning: number)
        continuation = nil
    }

    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            queue.async {
                if let received = self.received { continuation.resume(returning: received) } else { self.continuation = continuation }
            }
        }
    }
}

/// Keeps event ids increasing across restarts: a high-water mark is stored ahead of the ids in
/// use, in blocks, and the next run starts above it.
final class EventIDHighWater: @unchecked Sendable {
    static let key = "event-id-high-water"
    static let block: Int64 = 100_000
    private let store: any JobStore
    private let lock = NSLock()
    private var stored: Int64
    let startAfter: Int64

    private init(store: any JobStore, stored: Int64) {
        self.store = store
        self.stored = stored
        self.startAfter = stored
    }

    /// Reads the stored mark and moves it a block ahead. When the disk is too full for that write, Ferry
    /// still starts: ids continue after the stored mark (every id issued before is below it), and the
    /// mark is written by the first `cover` that finds room, before any event goes out.
    static func load(store: any JobStore) async throws -> EventIDHighWater {
        let previous = try await store.value(forKey: key).flatMap { Int64($0) } ?? 0
        let mark = EventIDHighWater(store: store, stored: previous)
        do {
            try await mark.cover(previous + 1)
        } catch let error as JobStoreError where error.isOutOfSpace {
            // Nothing was published yet; `cover` runs again before the first event is.
        }
        return mark
    }

    /// Makes sure the stored mark is above `id` before events up to it are published.
    func cover(_ id: Int64) async throws {
        let current = lock.withLock { stored }
        guard id + Self.block / 2 > current else { return }
        let next = id + Self.block
        try await store.setValue(String(next), forKey: Self.key)
        lock.withLock { stored = max(stored, next) }
    }
}
