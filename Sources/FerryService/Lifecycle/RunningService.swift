import FerryEngine
import FerryHTTP
import FerryStore

/// The parts of a started `FerryService` that stopping needs, all built before the service is
/// handed out (`start(configuration:logger:)`, in `RunningService+Start.swift`) and never changed
/// after; `stop(grace:)` takes them down in the order that keeps every byte.
struct RunningService: Sendable {
    let store: any JobStore
    let engine: DownloadEngine
    let supervisor: JobSupervisor
    let hub: EventHub
    let commits: CommitPipeline
    let server: HTTPServer
    /// The routes the server answers (read by tests that walk every route).
    let router: Router
    /// Where the engine's events wait for `eventPump`, which hands them to the supervisor.
    let engineEvents: TransferEventMailbox
    let eventPump: Task<Void, Never>
    /// Loops that run until cancelled: idempotency-record purge, retention sweep, store ballast.
    let chores: [Task<Void, Never>]
    /// With several nodes: leases, claims and notifications; nil on a single node.
    let membership: ClusterMembership?
    /// Delivers webhook notices from the outbox, over `requests`.
    let webhooks: WebhookSender
    let requests: RequestRunner
    /// `--lease`, in seconds.
    let leaseSeconds: Double
    /// Fetch-through's entries, written to the store before it closes.
    var fetchCache: FetchCache? = nil
    /// Hands the allocator's free memory back when it piles up; nil unless the service manages its process's memory.
    var memory: MemoryReturner? = nil

    /// Stops accepting, closes event streams, stops transfers (bytes kept, jobs not marked paused),
    /// applies their last events, writes state, closes the store. Call once.
    /// - Parameter grace: seconds the server gives open requests before closing their connections.
    func stop(grace: Double) async {
        for chore in chores { chore.cancel() }
        memory?.stop()
        await membership?.stop()
        hub.closeAll()
        async let serverDone: Void = server.shutdown(grace: grace)
        // With several nodes, the downloads' held parts are stored first (within a quarter of a lease, while this
        // node still holds its leases), so the nodes taking them over fetch again only what each connection was writing.
        await engine.shutdown(storingHeldPartsWithin: membership == nil ? 0 : leaseSeconds / 4)
        engineEvents.finish()
        await eventPump.value
        await commits.flush()
        await supervisor.saveDailyBytes()
        // The stopped transfers' bytes are written: other nodes may continue them at once.
        await membership?.leave()
        // Notices not yet delivered stay in the outbox for the next start.
        await webhooks.stop(closingTransport: { await requests.close() })
        await serverDone
        await fetchCache?.flush()
        await store.close()
    }
}
