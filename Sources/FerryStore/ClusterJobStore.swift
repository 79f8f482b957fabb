import Foundation

/// What a job store shared by several Ferry nodes adds to `JobStore`: nodes and their heartbeats, job ownership
/// under leases, owner-fenced commits, and the cluster-wide event log. Implemented by `PostgresJobStore`.
///
/// The rule every node follows: **a node changes a job only while it owns it** (or while nobody does). Ownership is
/// the `owner` of the job's row, with a lease (`leaseUntil`, on the database's clock, `now()`) and an epoch (a
/// fencing token raised each time a node other than the last to take the job takes it): a node takes jobs
/// with `claim` (jobs that need running) or `acquire` (one job, for an action such as pause or DELETE), keeps them
/// with `renew`, and gives them back with `release` or `leave`. Another node may take a job only when it is
/// unowned or its owner's lease has expired (a handover); the former owner then finds the job missing from what
/// `renew` returns, and its `commit`s of that job are refused (fencing): it must stop working on it. A node that
/// wakes up late (stopped past its lease) is refused even when the job has no owner any more: its writes carry the
/// epoch it held the job under, compared in the same statement.
///
/// Every call is one transaction; every commit that changes jobs or appends events also notifies the other nodes
/// (`ClusterChannel`), delivered only if it commits. Lease durations are whole milliseconds.
public protocol ClusterJobStore: JobStore {
    /// Records that `node` is alive until `lease` from now (inserting it the first time, or again after its lease
    /// ran out, as a new start) and returns every node alive now, this one included, by id.
    func heartbeat(node: String, lease: Duration) async throws -> [ClusterNode]
    /// Every node alive now (its lease running), by id; records nothing.
    func liveNodes() async throws -> [ClusterNode]
    /// Graceful stop: releases every job `node` owns and removes the node, in one transaction. Returns the ids released.
    @discardableResult
    func leave(node: String) async throws -> [String]

    /// Takes up to `limit` jobs that need running for `node`, in priority (highest first) then submission order:
    /// `waiting` jobs, and `downloading`/`delivering` ones, that nobody owns or whose owner's lease has expired.
    /// Rows another transaction is claiming are skipped (`FOR UPDATE SKIP LOCKED`), so nodes claiming at once never
    /// get the same job. The state is left as it is: the caller runs the jobs and commits their changes.
    ///
    /// `keyCaps`: the `maxActiveJobs` of the API keys that have one, by key id. Such a key's jobs are claimed only
    /// while fewer of them than its cap are owned under a running lease on any node (claims of them take turns across
    /// nodes), so the cap holds cluster-wide; a capped key's jobs beyond it are passed over, not waited for.
    func claim(node: String, limit: Int, lease: Duration, keyCaps: [String: Int64]) async throws -> [ClaimedJob]
    /// Extends the lease of every job `node` owns and returns their ids. A job missing from the answer was taken
    /// over by another node after the lease expired: `node` must stop it (its writes would be refused anyway).
    func renew(node: String, lease: Duration) async throws -> Set<String>
    /// Takes one job for an action, when it is unowned, already `node`'s, or its owner's lease has expired.
    func acquire(id: String, node: String, lease: Duration) async throws -> JobAcquisition
    /// Gives jobs back (unowned, so any node may claim them). Returns the ids that `node` owned and released.
    @discardableResult
    func release(ids: [String], node: String) async throws -> [String]
    /// How many `downloading` jobs of each of `keys` each node holds under a running lease: key, then node, then count.
    func downloadingJobs(ofKeys keys: [String]) async throws -> [String: [String: Int]]
    /// Which node owns each job whose lease is running now (for `"node"` in the job object and for metrics).
    func liveOwners() async throws -> [String: String]
    /// The stored jobs among `ids`, each with the node whose lease on it runs now (nil: none): what a node reads
    /// when another node's commit names jobs it changed, in one statement. Jobs no longer stored are left out.
    func jobsWithLiveOwners(ids: [String]) async throws -> [(job: JobRecord, liveOwner: String?)]

    /// Applies `change` for `node` in one transaction (a group commit), fenced: an update or deletion of a job owned
    /// by another node is not applied, and neither are the events and notices of that job (`ClusterCommit.refused`
    /// names the owner); jobs no longer stored are skipped. Jobs the commit leaves paused, failed, finished or
    /// cancelled are released. Events get their ids here, in commit order (see `events(after:limit:)`).
    func commit(_ change: ClusterChange, node: String) async throws -> ClusterCommit
    /// Events with ids above `after`, lowest first, at most `limit` (clamped to 1...10,000). Ids commit in increasing
    /// order: a reader that has seen id N never later finds a new event below N, so replaying from the last id read
    /// misses nothing. Ids may skip numbers (a rolled-back commit).
    func events(after: Int64, limit: Int) async throws -> [StoredEvent]
    /// The replay window: events after `purgedThrough` are all still stored; `latest` is the highest id committed
    /// (0 when none). A reader whose last id is below `purgedThrough` cannot replay and must re-list (`reset`).
    func eventWindow() async throws -> EventWindow
    /// Deletes events beyond the newest `count` and those created strictly before `createdBefore` (either limit may
    /// be nil). Returns how many were deleted.
    @discardableResult
    func purgeEvents(keepingNewest count: Int?, createdBefore: Date?) async throws -> Int
    /// Sends `command` to the node `node` (`ClusterChannel.commands`), at once, whether or not it listens.
    func send(command: String, to node: String) async throws
    /// Sends each payload on `channel` to every node listening (`ClusterChannel.progress`, `.sessions`), at once, in
    /// one round trip; each under `ClusterChannel`'s payload limit.
    func notify(_ payloads: [String], on channel: String) async throws
    /// The `meta` value under `key`, storing `value` first when there is none: the first node to ask decides it
    /// (a secret every node must share, such as the page sessions').
    func firstValue(forKey key: String, proposing value: String) async throws -> String

    /// The record of the job's unfinished multipart upload (the parts stored so far, as the engine wrote it), if any.
    func objectUpload(jobID: String) async throws -> String?
    /// Replaces the record of the job's multipart upload (nil removes it), fenced like `commit`: only while `node`
    /// owns the job, nobody does, or its owner's lease has expired, and, given the `epoch` the node holds the job
    /// under, only while the job's epoch is still that one; a record is never stored for a job that is gone
    /// (removing one is). Returns whether it was written.
    @discardableResult
    func saveObjectUpload(_ document: String?, jobID: String, node: String, epoch: Int64?) async throws -> Bool
}

extension ClusterJobStore {
    /// `saveObjectUpload(_:jobID:node:epoch:)` by a node that does not hold the job under a known epoch.
    @discardableResult
    public func saveObjectUpload(_ document: String?, jobID: String, node: String) async throws -> Bool {
        try await saveObjectUpload(document, jobID: jobID, node: node, epoch: nil)
    }

    /// One `job(id:)` per id and `liveOwners()`: for stores without a statement of their own.
    public func jobsWithLiveOwners(ids: [String]) async throws -> [(job: JobRecord, liveOwner: String?)] {
        var found: [JobRecord] = []
        for id in ids {
            if let job = try await job(id: id) { found.append(job) }
        }
        let owners = found.isEmpty ? [:] : try await liveOwners()
        return found.map { ($0, owners[$0.id]) }
    }

    /// `claim(node:limit:lease:keyCaps:)` with no key capped.
    public func claim(node: String, limit: Int, lease: Duration) async throws -> [ClaimedJob] {
        try await claim(node: node, limit: limit, lease: lease, keyCaps: [:])
    }
}

/// A node as the store knows it. Dates are the database server's clock, to the millisecond.
public struct ClusterNode: Sendable, Equatable {
    public var id: String
    /// When the node started (its first heartbeat, or the first after its lease had run out).
    public var startedAt: Date
    public var heartbeatAt: Date
    public var leaseUntil: Date

    public init(id: String, startedAt: Date, heartbeatAt: Date, leaseUntil: Date) {
        self.id = id
        self.startedAt = startedAt
        self.heartbeatAt = heartbeatAt
        self.leaseUntil = leaseUntil
    }
}

/// A job `claim` gave a node.
public struct ClaimedJob: Sendable, Equatable {
    public var job: JobRecord
    /// The node that owned it before, whose lease had expired (a handover); nil when it was unowned.
    public var previousOwner: String?
    /// The job's epoch under this claim: the fencing token the node's writes for it carry.
    public var epoch: Int64
    /// The job's parts record (`objectUpload(jobID:)`) as the claim read it; nil when it has none, or the store's
    /// claim does not read it (`objectUploadRead` false).
    public var objectUpload: String?
    /// Whether `objectUpload` is what the claim read (the job's first start then need not ask the store again).
    public var objectUploadRead: Bool

    public init(job: JobRecord, previousOwner: String?, epoch: Int64 = 0, objectUpload: String? = nil,
                objectUploadRead: Bool = false) {
        self.job = job
        self.previousOwner = previousOwner
        self.epoch = epoch
        self.objectUpload = objectUpload
        self.objectUploadRead = objectUploadRead
    }
}

/// What `acquire` found.
public enum JobAcquisition: Sendable, Equatable {
    /// The node owns the job now; the record as stored, and the epoch it holds the job under (the same as before
    /// when this node was the last to take it, else raised).
    case acquired(JobRecord, epoch: Int64)
    /// A live node owns it: forward the command to that node.
    case owned(by: String, leaseUntil: Date)
    /// No job with this id.
    case notFound
}

/// What one `ClusterJobStore.commit` stores, all or nothing.
public struct ClusterChange: Sendable, Equatable {
    /// New jobs, unowned (any node may claim them); `sequence` is assigned as by `insert`.
    public var inserts: [JobRecord]
    /// Saved with `inserts`, as by `insert(_:idempotencyRecord:)`.
    public var idempotencyRecord: IdempotencyRecord?
    public var updates: [JobRecord]
    public var deletions: [String]
    public var notices: [WebhookNotice]
    public var events: [NewEvent]
    /// The epoch the node held each updated or deleted job under, when it did (`ClaimedJob.epoch`): such a change is
    /// refused unless the job's epoch is still that one and no other node owns it, even when nobody owns it now.
    public var heldUnder: [String: Int64]

    public init(inserts: [JobRecord] = [], idempotencyRecord: IdempotencyRecord? = nil, updates: [JobRecord] = [],
                deletions: [String] = [], notices: [WebhookNotice] = [], events: [NewEvent] = [],
                heldUnder: [String: Int64] = [:]) {
        self.heldUnder = heldUnder
        self.inserts = inserts
        self.idempotencyRecord = idempotencyRecord
        self.updates = updates
        self.deletions = deletions
        self.notices = notices
        self.events = events
    }

    public var isEmpty: Bool {
        inserts.isEmpty && idempotencyRecord == nil && updates.isEmpty && deletions.isEmpty && notices.isEmpty
            && events.isEmpty
    }
}

/// What a `commit` did.
public struct ClusterCommit: Sendable, Equatable {
    /// `inserts` as stored (`sequence` assigned).
    public var inserted: [JobRecord]
    /// Jobs whose update or deletion was refused, with the node that owns them (empty when nobody does: the job was
    /// taken since the epoch the change was held under).
    public var refused: [String: String]
    /// The events appended, with their ids, in order.
    public var events: [StoredEvent]

    public init(inserted: [JobRecord] = [], refused: [String: String] = [:], events: [StoredEvent] = []) {
        self.inserted = inserted
        self.refused = refused
        self.events = events
    }
}

/// The kinds of event kept in the cluster-wide log (API.md, "Events"): progress is never stored.
public enum StoredEventKind: String, Sendable, Equatable, CaseIterable {
    case job
    case removed
}

/// An event to append; the store assigns its id and time.
public struct NewEvent: Sendable, Equatable {
    public var jobID: String
    public var kind: StoredEventKind
    /// The event's `data:` (one-line JSON), as bytes.
    public var data: [UInt8]
    /// The API key owning the job (streams of other keys do not get it); nil for the administrator's.
    public var ownerKey: String?

    public init(jobID: String, kind: StoredEventKind, data: [UInt8], ownerKey: String? = nil) {
        self.jobID = jobID
        self.kind = kind
        self.data = data
        self.ownerKey = ownerKey
    }
}

/// An event as stored: `id` from the database's `event_id` sequence, increasing in commit order cluster-wide.
public struct StoredEvent: Sendable, Equatable {
    public var id: Int64
    public var jobID: String
    public var kind: StoredEventKind
    public var data: [UInt8]
    /// The database server's clock, to the millisecond.
    public var createdAt: Date
    /// The API key owning the job; nil for the administrator's.
    public var ownerKey: String?

    public init(id: Int64, jobID: String, kind: StoredEventKind, data: [UInt8], createdAt: Date, ownerKey: String? = nil) {
        self.id = id
        self.jobID = jobID
        self.kind = kind
        self.data = data
        self.createdAt = createdAt
        self.ownerKey = ownerKey
    }
}

/// Which events a reader can still replay (`ClusterJobStore.eventWindow`).
public struct EventWindow: Sendable, Equatable {
    /// Every event with an id above this is still stored (0: none was ever purged).
    public var purgedThrough: Int64
    /// The highest event id committed (0 when none).
    public var latest: Int64

    public init(purgedThrough: Int64, latest: Int64) {
        self.purgedThrough = purgedThrough
        self.latest = latest
    }

    /// Whether a reader that has seen every event up to `lastID` can replay the rest.
    public func canReplay(after lastID: Int64) -> Bool {
        lastID >= purgedThrough && lastID <= latest
    }
}
