import FerryStore
import Synchronization

/// The supervisor's table of jobs and their live rates, readable from any thread.
///
/// Owner: `JobSupervisor`, which makes every change, from the actor only (so the table changes in
/// the supervisor's order, and it stays the only place job state changes). Any thread may read one
/// job with `entry(_:)` without waiting for the actor, e.g. `GET /api/v1/jobs/{id}` answered on a
/// connection queue. The lock is held only to copy a value in or out. A reader sees every change
/// the supervisor made before the read; a job and its rates are two writes, so a read between them
/// can pair the new rates with the previous record (a speed of 0 for a moment, never a wrong state).
final class JobTable: Sendable {
    /// One record in the table, boxed: a dictionary slot then holds a reference (8 bytes) rather than the record
    /// (136), so at 100,000 jobs the table's 262,144 slots take 6 MB rather than 40, and growing it (old and new
    /// slots live at once) costs that much less. A box never changes: a new record is a new box.
    final class RecordBox: Sendable {
        let record: JobRecord
        init(_ record: JobRecord) { self.record = record }
    }

    private struct Contents {
        var jobs: [String: RecordBox] = [:]
        var rates: [String: LiveRates] = [:]
        /// With several nodes, the node running each job that has one.
        var nodes: [String: String] = [:]
        /// Jobs whose end (finished, failed) is not yet durable: the record readers see meanwhile, the id of the last
        /// event reflected in it, and the hold's number (the latest hold of a job is the one whose release shows the
        /// table's record again).
        var heldBack: [String: (shown: JobRecord, after: Int64, hold: Int)] = [:]
        var holds = 0
        /// Job ids by `gid` (`JobGID`), kept with `jobs`: aria2's RPC names jobs by gid (each job's own is in its listing).
        var idsByGID: [String: String] = [:]
        /// The listing of the record readers see of each job (`JobListing`), renewed whenever that record changes.
        var listings: [String: JobListing] = [:]
        /// The last listing version given (`JobListing.version`).
        var version: UInt64 = 0
        /// For each state (`slot`), the listing version of the last change to a job in it: one entering it, changing
        /// in it or leaving it (`lastChange(among:)`).
        var stateChanges = [UInt64](repeating: 0, count: JobState.allCases.count)
        /// The number each API key that owned a job has in listings (`JobListing.owner`), from 1; kept for the
        /// table's life (one per key, and keys are few).
        var owners: [String: UInt32] = [:]
        /// With several nodes, how many jobs this node holds the lease of (the supervisor's `owned`).
        var leasesHeld = 0

        /// The gid is hashed only when the job is new (inserts are rare, updates many: a progress sample each).
        mutating func set(_ job: JobRecord?, for id: String) -> JobRecord? {
            guard let job else { return remove(id) }
            let old = jobs.updateValue(RecordBox(job), forKey: id)?.record
            var gid: UInt64?
            if old == nil {
                let text = JobGID.of(id)
                idsByGID[text] = id
                gid = JobGID.value(text)
            }
            // A job whose end is held back keeps the listing of the record readers see (the held one).
            if let held = heldBack[id] {
                if old == nil { list(held.shown, id: id, gid: gid) }
            } else {
                list(job, id: id, gid: gid)
            }
            return old
        }

        mutating func remove(_ id: String) -> JobRecord? {
            heldBack[id] = nil
            if let listed = listings.removeValue(forKey: id) {
                version += 1
                stateChanges[Self.slot(listed.state)] = version
                idsByGID[JobGID.text(listed.gid)] = nil
            }
            return jobs.removeValue(forKey: id)?.record
        }

        /// Renews the listing of `id`, whose record readers now see is `shown` (`gid`: its gid, for a job new to the table).
        mutating func list(_ shown: JobRecord, id: String, gid: UInt64? = nil) {
            version += 1
            let previous = listings[id]
            if let previous { stateChanges[Self.slot(previous.state)] = version }
            stateChanges[Self.slot(shown.state)] = version
            let gid = gid ?? previous?.gid ?? JobGID.value(JobGID.of(id))
            var owner: UInt32 = 0
            if let key = shown.ownerKey {
                if let number = owners[key] {
                    owner = number
                } else {
                    owner = UInt32(truncatingIfNeeded: owners.count + 1)
                    owners[key] = owner
                }
            }
            listings[id] = JobListing(shown, gid: gid, owner: owner, version: version)
        }

        static func slot(_ state: JobState) -> Int {
            switch state {
            case .waiting: 0
            case .downloading: 1
            case .delivering: 2
            case .paused: 3
            case .finished: 4
            case .failed: 5
            case .cancelled: 6
            }
        }
    }

    private let contents = Mutex(Contents())

    init() {}

    /// A job and its live rates as readers see them, from any thread: a job whose end is not yet durable shows as it
    /// was before (`holdBack`), so nobody is told of an end a crash could take back.
    func entry(_ id: String) -> (JobRecord, LiveRates?)? {
        contents.withLock { contents in
            guard let job = contents.jobs[id]?.record else { return nil }
            if let held = contents.heldBack[id] { return (held.shown, nil) }
            return (job, contents.rates[id])
        }
    }

    /// The record readers see (`entry`), without rates.
    func shown(_ id: String) -> JobRecord? {
        contents.withLock { contents in
            guard let job = contents.jobs[id]?.record else { return nil }
            return contents.heldBack[id]?.shown ?? job
        }
    }

    /// Calls `body` with the listing of every job (`JobListing`, of the record readers see: a job whose end is held back
    /// as it was before, `holdBack`), in no order, under one hold of the lock: aria2's lists and counts read the whole
    /// table at once, from any thread, copying no record. With `onlyKey`, only the jobs that API key owns (as
    /// `JobAccess.onlyKey`). For the job at hand, `body` may call `shown` for the record its listing was taken from (a
    /// copy) and `rates` for its live rates. `body` runs under the lock, so it must be quick and must not touch the table.
    func forEachListed(onlyKey: String? = nil,
                       _ body: (JobListing, _ shown: () -> JobRecord, _ rates: () -> LiveRates?) -> Void) {
        contents.withLock { contents in
            var owner: UInt32?
            if let onlyKey {
                guard let number = contents.owners[onlyKey] else { return }
                owner = number
            }
            var index = contents.listings.startIndex
            while index != contents.listings.endIndex {
                defer { contents.listings.formIndex(after: &index) }
                let listing = contents.listings.values[index]
                if let owner, listing.owner != owner { continue }
                body(listing) {
                    let id = contents.listings.keys[index]
                    // `listings` has the same ids as `jobs` (`set`, `remove`).
                    return contents.heldBack[id]?.shown ?? contents.jobs[id]!.record
                } _: {
                    contents.rates[contents.listings.keys[index]]
                }
            }
        }
    }

    /// The jobs by state and the sum of their live download speeds, as readers see them (`forEachListed`), from any
    /// thread: `/metrics` answers from it without waiting for the supervisor, which may be behind exactly when someone
    /// looks. With `onlyKey`, only that key's jobs.
    func tally(onlyKey: String? = nil) -> (counts: [JobState: Int], speed: Double) {
        var counts: [JobState: Int] = [:]
        var speed = 0.0
        forEachListed(onlyKey: onlyKey) { listing, _, rates in
            counts[listing.state, default: 0] += 1
            speed += rates()?.speed ?? 0
        }
        return (counts, speed)
    }

    /// How many jobs this node holds the lease of (several nodes), from any thread. Changes only from the supervisor.
    var leasesHeld: Int { contents.withLock { $0.leasesHeld } }

    func setLeasesHeld(_ count: Int) {
        contents.withLock { $0.leasesHeld = count }
    }

    /// The listing version (`JobListing.version`) of the last change to a job in any of `states` (one entering, changing
    /// in or leaving them), from any thread: while it stays the same, so does every listing and record of those states
    /// that readers see, and which jobs have them (their live rates aside).
    func lastChange(among states: [JobState]) -> UInt64 {
        contents.withLock { contents in states.map { contents.stateChanges[Contents.slot($0)] }.max() ?? 0 }
    }

    /// Readers go on seeing `shown` (the job before a change that ends it, reflecting the events up to `after`) until
    /// `release` with the returned hold, called once that change is durable. A job already held keeps the record it
    /// shows (the last durable one). Changes only from the supervisor.
    func holdBack(_ id: String, showing shown: JobRecord, after: Int64) -> Int {
        contents.withLock { contents in
            contents.holds += 1
            let earlier = contents.heldBack[id]
            contents.heldBack[id] = (earlier?.shown ?? shown, earlier?.after ?? after, contents.holds)
            if earlier == nil, contents.jobs[id] != nil { contents.list(shown, id: id) }
            return contents.holds
        }
    }

    /// The newest event id every record readers see reflects while ends are held back (the least `after` of the
    /// holds); nil when none is. A list answered with a later id would have its reader skip a held job's end event.
    func heldAfter() -> Int64? {
        contents.withLock { $0.heldBack.values.map(\.after).min() }
    }

    /// Whether readers see an earlier record of the job than the table's (an end not yet durable).
    func isHeldBack(_ id: String) -> Bool {
        contents.withLock { $0.heldBack[id] != nil }
    }

    /// Ends a hold: readers see the table's record again, unless a later hold of the job is still waiting.
    func release(_ id: String, hold: Int) {
        contents.withLock { contents in
            guard contents.heldBack[id]?.hold == hold else { return }
            contents.heldBack[id] = nil
            if let job = contents.jobs[id]?.record { contents.list(job, id: id) }
        }
    }

    /// The id of the job whose gid is `gid` (lower case), from any thread.
    func id(ofGID gid: String) -> String? {
        contents.withLock { $0.idsByGID[gid] }
    }

    /// How many entries each of its maps holds (jobs, gid index, rates, nodes, ends held back, listings), from any
    /// thread: each is bounded by the jobs kept (`DeletedJobTracesTests`).
    var entryCounts: (jobs: Int, gids: Int, rates: Int, nodes: Int, heldBack: Int, listings: Int) {
        contents.withLock {
            ($0.jobs.count, $0.idsByGID.count, $0.rates.count, $0.nodes.count, $0.heldBack.count, $0.listings.count)
        }
    }

    /// The node running a job (several nodes), from any thread.
    func node(of id: String) -> String? {
        contents.withLock { $0.nodes[id] }
    }

    /// Records which node runs `id` (nil: none). Changes only from the supervisor.
    func setNode(_ node: String?, of id: String) {
        contents.withLock { $0.nodes[id] = node }
    }

    /// Replaces the nodes of every job but `keeping` ones. Changes only from the supervisor.
    func setNodes(_ nodes: [String: String], keeping kept: Set<String>) {
        contents.withLock { contents in
            var merged = nodes
            for id in kept { merged[id] = contents.nodes[id] }
            contents.nodes = merged
        }
    }

    /// The records, as a dictionary-like view (the supervisor's `jobs`).
    var jobs: Jobs { Jobs(table: self) }
    /// The live rates of running transfers, as a dictionary-like view (the supervisor's `rates`).
    var rates: Rates { Rates(table: self) }

    /// Job records by id. Changes only from the supervisor.
    struct Jobs {
        fileprivate let table: JobTable

        subscript(id: String) -> JobRecord? {
            get { table.contents.withLock { $0.jobs[id]?.record } }
            nonmutating set { _ = table.contents.withLock { $0.set(newValue, for: id) } }
        }

        /// Every record as the table had it when asked (the boxes are shared: cheap until the table next changes).
        var values: Records { Records(boxes: table.contents.withLock { $0.jobs.values }) }

        @discardableResult
        func updateValue(_ job: JobRecord, forKey id: String) -> JobRecord? {
            table.contents.withLock { $0.set(job, for: id) }
        }

        @discardableResult
        func removeValue(forKey id: String) -> JobRecord? {
            table.contents.withLock { $0.remove(id) }
        }

        /// Room for `count` records, their gids and listings without growing (recovery knows how many it adds).
        func reserveCapacity(_ count: Int) {
            table.contents.withLock { contents in
                contents.jobs.reserveCapacity(count)
                contents.idsByGID.reserveCapacity(count)
                contents.listings.reserveCapacity(count)
            }
        }
    }

    /// The records of the table at one moment, in no order (`Jobs.values`).
    struct Records: Sequence {
        fileprivate let boxes: [String: RecordBox].Values

        var count: Int { boxes.count }
        var isEmpty: Bool { boxes.isEmpty }

        func makeIterator() -> Iterator { Iterator(base: boxes.makeIterator()) }

        struct Iterator: IteratorProtocol {
            fileprivate var base: [String: RecordBox].Values.Iterator
            mutating func next() -> JobRecord? { base.next()?.record }
        }
    }

    /// Live rates by job id. Changes only from the supervisor.
    struct Rates {
        fileprivate let table: JobTable

        subscript(id: String) -> LiveRates? {
            get { table.contents.withLock { $0.rates[id] } }
            nonmutating set { table.contents.withLock { $0.rates[id] = newValue } }
        }

        var values: [String: LiveRates].Values { table.contents.withLock { $0.rates.values } }
    }
}
