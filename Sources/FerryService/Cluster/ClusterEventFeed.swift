import FerryStore
import Foundation
import Logging

/// Publishes, on one node of several, what every node's streams must see, in increasing id order: the stored
/// `job`/`removed` events of the whole cluster, read back from the store (`events(after:)`) on each `ferry_events`
/// notification naming an id beyond those published and after the listener reconnects, this node's own as its
/// commits return them when they follow the last published (read back otherwise), and this node's `progress`
/// events, numbered inside the current block (`ClusterEventID`; half used, it asks for a new one).
///
/// Owner: this actor owns the position read up to (`lastStored`); reads are serialized (`catchUp` joins a read
/// under way and reads once more after it), so no event is published twice. The hub's queue keeps the order in
/// which this actor hands events over. Used by the commit pipeline (cluster mode) and `RunningService+Cluster`.
actor ClusterEventFeed {
    private let store: any ClusterJobStore
    private let hub: EventHub
    private let ids: EventIDAllocator
    private let logger: Logger
    /// The highest stored event id published.
    private(set) var lastStored: Int64
    private var reading: Task<Void, Never>?
    private var readAgain = false
    /// Asked for a new block (a `job` event committed) when progress has used much of the current one.
    private var refill: (@Sendable () -> Void)?
    private var refillAsked = false

    /// Sets what asks for a new block (`JobSupervisor.checkpoint`); once, at start.
    func onBlockFilling(_ refill: @escaping @Sendable () -> Void) {
        self.refill = refill
    }

    /// - Parameter after: the stored id the hub's log starts after (`ids.base` is its published id).
    init(store: any ClusterJobStore, hub: EventHub, ids: EventIDAllocator, after: Int64, logger: Logger) {
        self.store = store
        self.hub = hub
        self.ids = ids
        self.lastStored = after
        self.logger = logger
    }

    /// Reads and publishes every stored event after the last one published; returns once those committed before
    /// the call are published (or the store failed, logged: the next notification or reconnection reads again).
    func catchUp() async {
        if let reading {
            readAgain = true
            await reading.value
            return
        }
        let task = Task { await self.readLoop() }
        reading = task
        await task.value
    }

    /// After a `ferry_events` notification naming `latest`, the highest id its commit took: reads only when this
    /// node has not published that far (a node hears its own commits too, published by `committed`).
    func heard(latest: Int64?) async {
        if let latest, latest <= lastStored, reading == nil { return }
        await catchUp()
    }

    /// The events this node's commit stored, as the commit returned them: published at once when they follow the last
    /// one published with no id between (nothing another node committed can be missing), read back otherwise.
    func committed(_ stored: [StoredEvent]) async {
        guard !stored.isEmpty else { return }
        let follows = stored.first?.id == lastStored + 1
            && zip(stored, stored.dropFirst()).allSatisfy { $0.id + 1 == $1.id }
        guard follows, reading == nil else { return await catchUp() }
        publish(stored)
    }

    /// Publishes stored events, in id order, that follow the last one published.
    private func publish(_ stored: [StoredEvent]) {
        guard let last = stored.last else { return }
        ids.advance(to: ClusterEventID.published(last.id))
        lastStored = last.id
        refillAsked = false
        hub.publish(stored.map(Self.serverEvent))
    }

    private func readLoop() async {
        repeat {
            readAgain = false
            do {
                while true {
                    let stored = try await store.events(after: lastStored, limit: 1_000)
                    guard !stored.isEmpty else { break }
                    publish(stored)
                    if stored.count < 1_000 { break }
                }
            } catch {
                logger.warning("cannot read the cluster's events", metadata: ["error": "\(error)"])
            }
        } while readAgain
        reading = nil
    }

    /// Before a stream replays after `lastID` (a `Last-Event-ID` another node may have issued): reads the stored events
    /// this node has not published yet when `lastID` lies beyond them, so the replay knows the id and starts after
    /// it. Without this, a client reconnecting here with the id of an event this node had not read yet was answered
    /// `reset` and then sent that same event live (issue 35).
    func catchUp(toInclude lastID: Int64) async {
        guard ClusterEventID.stored(fromPublished: lastID) > lastStored else { return }
        await catchUp()
    }

    /// Publishes this node's progress events with ids of the current block; those that find it used up are dropped.
    func publishProgress(_ events: [ServerEvent]) {
        var numbered: [ServerEvent] = []
        for event in events where event.kind == .progress {
            guard let id = ids.nextInBlock() else { break }
            numbered.append(ServerEvent(id: id, kind: .progress, jobID: event.jobID, data: event.data, owner: event.owner))
        }
        if !numbered.isEmpty { hub.publish(numbered) }
        if !refillAsked, ClusterEventID.needsRefill(after: ids.lastAllocated) {
            refillAsked = true
            refill?()
        }
    }

    /// The `state` of a job event's object: read without parsing the rest (`TopLevelJSONString`), or parsed whole
    /// when that cannot say.
    static func state(of data: [UInt8]) -> String? {
        if let state = TopLevelJSONString.value(of: "state", in: data) { return state }
        return (try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any])?["state"] as? String
    }

    /// A stored event as the hub publishes it: a terminal job's `job` event and `removed` end per-job streams.
    static func serverEvent(_ stored: StoredEvent) -> ServerEvent {
        let kind: ServerEvent.Kind = stored.kind == .removed ? .removed : .job
        var closes = kind == .removed
        if kind == .job, let state = Self.state(of: stored.data) {
            closes = JobState(rawValue: state)?.isTerminal ?? false
        }
        return ServerEvent(id: ClusterEventID.published(stored.id), kind: kind, jobID: stored.jobID, data: stored.data,
                           closesJobStream: closes, owner: stored.ownerKey)
    }
}
