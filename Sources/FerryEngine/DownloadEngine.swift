import CCurl
import Dispatch
import FerryCore
import Foundation
import Logging

/// Downloads files into the spool with libcurl: scheduling, resume, retries, limits, events.
///
/// Every piece of state (the transfers, the scheduling queue, the libcurl multi) is owned by one serial queue,
/// `queue`; public methods hop onto it and return at once. Disk I/O runs on each transfer's writer queue and on
/// `diskQueue`, never on `queue`. Events are delivered serially, in order, on `eventQueue`.
///
/// A big file whose origin serves ranges is fetched over several connections at once into one preallocated
/// partial file (`DownloadEngine+Segments.swift`); its segments' progress survives pauses, restarts and crashes
/// in `partial/<id>.segments`.
///
/// ```swift
/// let engine = DownloadEngine(configuration: .init(), spool: spool, logger: logger) { event in ... }
/// engine.submit(TransferSpec(id: "a1", url: "https://example.com/file.iso"))
/// ```
public final class DownloadEngine: @unchecked Sendable {
    let queue = DispatchQueue(label: "ferry.engine")
    var configuration: EngineConfiguration
    let logger: Logger
    /// Events emitted and not yet handed to the service, delivered in order on their own queue (see `emit(_:)`).
    let outbox: EventOutbox
    let multi: CurlMulti
    /// The spool, finished files' storage, the quota, free space, and the disk queues (`EngineDisk`).
    var disk: EngineDisk
    /// The cluster's object store, with the ledger of running jobs' part uploads; nil keeps files in the spool only.
    /// Set once, in `init`.
    private(set) var objects: EngineObjects?
    var transfers: [String: Transfer] = [:]
    /// Deliveries running or waiting to retry (`DownloadEngine+Deliveries`).
    var uploads: [String: Upload] = [:]
    var scheduling: SchedulingQueue<String>
    var rates = EngineRateLimits()
    var lifecycle = EngineLifecycle()

    /// The staging area: partial files, segment state, finish records, free space.
    var spool: Spool { disk.spool }
    /// Where finished files are kept and named (the spool's `files/` unless another storage is given).
    var storage: any FileStorage { disk.storage }
    var diskQueue: DispatchQueue { disk.queue }
    var eventQueue: DispatchQueue { outbox.queue }
    /// Where finished files are stored as objects before they are reported finished (`--object-store`); nil keeps
    /// them in the spool only. Its `stop()` comes first in `shutdown()`.
    public var objectStore: ObjectStoreClient? { objects?.client }
    /// Where the records of running jobs' multipart uploads are kept (the cluster's store): with it and `objectStore`,
    /// parts are uploaded while a download runs and a job started elsewhere continues from them (`DownloadEngine+Parts`).
    var uploadLedger: (any ObjectUploadLedger)? { objects?.ledger }

    /// - Parameter objectStore: the bucket finished files are stored in (the cluster's object store), with its keys.
    public init(configuration: EngineConfiguration, spool: Spool, storage: (any FileStorage)? = nil, logger: Logger,
                allowance: (any SpoolAllowance)? = nil,
                objectStore: (location: ObjectStoreLocation, credentials: ObjectStoreCredentials)? = nil,
                uploadLedger: (any ObjectUploadLedger)? = nil,
                onEvent: @escaping @Sendable (TransferEvent) -> Void) {
        self.configuration = configuration
        self.disk = EngineDisk(spool: spool, storage: storage ?? spool, allowance: allowance)
        self.logger = logger
        self.outbox = EventOutbox(deliver: onEvent)
        Self.initializeCurl
        self.multi = CurlMulti(queue: queue, maxConnects: Self.connectionCacheSize(configuration))
        self.scheduling = SchedulingQueue(maxActive: max(1, configuration.maxConcurrent), maxPerHost: max(1, configuration.maxPerHost))
        if let global = configuration.globalMaxBytesPerSecond, global > 0 {
            rates.global = TokenBucket(bytesPerSecond: global, now: Self.monotonicSeconds())
        }
        if let objectStore {
            objects = EngineObjects(client: objectStoreClient(location: objectStore.location, credentials: objectStore.credentials),
                                    ledger: uploadLedger)
        }
        queue.async {
            self.multi.afterDelivery = { [weak self] in self?.queueStagedWrites() }
            self.startTicker()
        }
    }

    /// Stages a body chunk with `writer` (one `pwrite` and one queue hop per burst, not per 16 KiB piece); the
    /// burst is queued when the libcurl call that delivered it returns.
    func stage(_ bytes: UnsafeRawBufferPointer, at offset: Int64, in writer: FileWriter, completion: @escaping @Sendable (SystemError?) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        if !disk.stagedWriters.contains(where: { $0 === writer }) { disk.stagedWriters.append(writer) }
        writer.stage(bytes, at: offset, completion: completion)
    }

    private func queueStagedWrites() {
        dispatchPrecondition(condition: .onQueue(queue))
        for writer in disk.stagedWriters { writer.flush() }
        disk.stagedWriters.removeAll(keepingCapacity: true)
    }

    /// Connections libcurl keeps open for reuse: two per concurrent transfer, plus one host's worth of segments.
    static func connectionCacheSize(_ configuration: EngineConfiguration) -> Int {
        max(1, configuration.maxConcurrent) * 2 + max(1, configuration.maxPerHost)
    }

    /// `curl_global_init` once per process, before any other libcurl call.
    private static let initializeCurl: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    // MARK: public API (any thread)

    /// Queues a transfer; it starts when the limits allow. With `resume`, continues from the bytes on disk when the
    /// origin's validators still match. A spec whose id is already known is ignored.
    public func submit(_ spec: TransferSpec) {
        queue.async { self.accept(spec) }
    }

    /// Stops a transfer keeping its bytes: `.paused(bytesOnDisk:)`. The engine forgets it afterwards.
    ///
    /// - Parameter stopped: called on the event queue after the `.paused` event, with the bytes on disk once the
    ///   writer has flushed; with nil when the engine has no such transfer or it ended another way (it finished).
    public func pause(id: String, stopped: (@Sendable (Int64?) -> Void)? = nil) {
        queue.async {
            guard let transfer = self.transfers[id] else {
                if let stopped { self.eventQueue.async { stopped(nil) } }
                return
            }
            if let stopped { transfer.stopObservers.append(stopped) }
            self.stop(transfer, .pause)
        }
    }

    /// Stops a transfer for good and deletes its partial file and reservation. No further events.
    public func cancel(id: String) {
        queue.async {
            self.abandonParts(jobID: id, live: self.transfers[id]?.parts)
            if let transfer = self.transfers[id] {
                self.stop(transfer, .cancel)
            } else {
                self.diskQueue.async { self.spool.removePartial(jobID: id) }
                self.storage.release(jobID: id)
            }
        }
    }

    public func updatePriority(id: String, _ priority: Int) {
        queue.async {
            guard let transfer = self.transfers[id] else { return }
            transfer.spec.priority = priority
            self.scheduling.updatePriority(id, priority)
            self.pump()
        }
    }

    /// Changes a transfer's speed limit, also while it runs.
    public func updateRateLimit(id: String, _ bytesPerSecond: Int64?) {
        queue.async {
            guard let transfer = self.transfers[id] else { return }
            transfer.spec.maxBytesPerSecond = bytesPerSecond
            self.setRateLimit(transfer, bytesPerSecond)
            self.applyRateLimits()
        }
    }

    /// Points a transfer at a new URL for the same file; a running transfer reconnects and continues from the bytes
    /// on disk (validated by If-Range).
    public func updateURL(id: String, _ url: SubmittedURL) {
        queue.async { self.changeURL(id: id, url) }
    }

    /// Points the run at a new URL. A split run's exchanges reconnect and each continues its segment from where it
    /// is; otherwise the partial file is opened again and the rest of it asked for (validated by If-Range).
    private func changeURL(id: String, _ url: SubmittedURL) {
        guard let transfer = transfers[id] else { return }
        transfer.spec.url = url
        if !transfer.sources.isEmpty { transfer.sources[0] = TransferSource(url: url, bytesReceived: transfer.sources[0].bytesReceived) }
        guard transfer.phase == .running, let run = transfer.segmented else { return }
        guard run.isSplit else {
            disconnectFetches(transfer)
            transfer.segmented = nil
            transfer.phase = .opening
            transfer.writer.openPartial(keepExisting: true, validator: transfer.ifRangeValidator, total: transfer.bytesExpected) { result in
                self.opened(transfer, result)
            }
            return
        }
        disconnectFetches(transfer)
        if transfer.referenceSource == 0 { run.requestURL = url.normalized }
        for fetch in run.fetches.values { fetch.failures = 0 }
        fillConnections(transfer)
    }

    /// Changes the shortest time between two progress events of a transfer (the finest `interval` an event
    /// stream asks for); the sampling timer follows.
    public func setProgressInterval(_ seconds: Double) {
        queue.async {
            let interval = max(0.05, seconds)
            guard interval != self.configuration.progressInterval else { return }
            self.configuration.progressInterval = interval
            self.lifecycle.ticker?.cancel()
            self.startTicker()
        }
    }

    /// Changes how many transfers run at once; running ones are never stopped to obey a lower limit.
    public func setMaxConcurrent(_ n: Int) {
        queue.async {
            self.configuration.maxConcurrent = max(1, n)
            self.scheduling.maxActive = max(1, n)
            self.multi.setMaxConnects(Self.connectionCacheSize(self.configuration))
            self.pump()
        }
    }

    /// Caps the transfers of one group (an API key's `maxActiveJobs`; nil: no cap of its own) running at once; the
    /// slots are shared round-robin between groups with waiting transfers (`SchedulingQueue`).
    public func setGroupCap(_ cap: Int?, group: String) {
        queue.async {
            self.scheduling.setCap(cap, group: group)
            self.pump()
        }
    }

    /// Limits the transfers of one group together (an API key's `maxBytesPerSecond`; nil: none of its own), within
    /// the engine-wide limit.
    public func setGroupRate(_ bytesPerSecond: Int64?, group: String) {
        queue.async {
            let now = Self.monotonicSeconds()
            if let limit = bytesPerSecond, limit > 0 {
                if self.rates.groups[group] != nil {
                    self.rates.groups[group]?.setRate(limit, now: now)
                } else {
                    self.rates.groups[group] = TokenBucket(bytesPerSecond: limit, now: now)
                }
            } else if self.rates.groups.removeValue(forKey: group) != nil {
                self.rates.floorsStale = true
            }
            self.applyRateLimits()
        }
    }

    /// Stops every transfer keeping its bytes (`.stopped`), lets finishing ones finish, cleans libcurl up, closes
    /// every descriptor, and returns after the last event was delivered.
    /// - Parameter seconds: with several nodes, how long the downloads may be held while their part uploads store
    ///   the parts their written bytes cover (`storeHeldParts`), so the node taking a job over fetches again only
    ///   what each connection was writing; 0 (a single node) stops at once.
    public func shutdown(storingHeldPartsWithin seconds: Double = 0) async {
        if seconds > 0, objectStore != nil, uploadLedger != nil {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                queue.async { self.storeHeldParts(until: Self.monotonicSeconds() + seconds) { continuation.resume() } }
            }
        }
        // First: an upload in flight ends (`.stopped`, the job keeps its bytes) and no content read outlives the multi.
        await objectStore?.stop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { self.beginShutdown { continuation.resume() } }
        }
    }

    // MARK: events

    /// Delivers an event on the event queue. Called on `queue` only, so events keep their order. Events wait in
    /// `outbox`, drained by one block on the event queue at a time: while that queue is held up (a busy machine),
    /// what waits is one progress sample per transfer and the lifecycle events, not a block per sample.
    func emit(_ event: TransferEvent) {
        dispatchPrecondition(condition: .onQueue(queue))
        outbox.emit(event)
    }

    /// Test hook: the connections the engine holds to `host` (see `connectionsInUse(host:)`).
    func connectionCount(host: String) async -> Int {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.connectionsInUse(host: host)) }
        }
    }

    /// Test hook: changes the free-space reserve while running.
    func setMinFreeSpace(_ bytes: Int64) {
        queue.async {
            self.configuration.minFreeSpace = bytes
            self.disk.lastCheck = 0
        }
    }
}
