import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Synchronization

/// Fetch-through's entries: which job holds the current file of each cache key, what its origin said about caching
/// it (when it stops being fresh, whether it may be kept), and when it was last served.
///
/// Owner: its `Mutex`, held only to copy a value in or out; told of origins' responses by the supervisor (on its
/// actor, `JobSupervisor.Dependencies.onResponded`) and asked by `FetchController` from any task. Entries are written
/// to the store (`FetchEntryWriter`, schema 10) as soon as the origin answers, on the node running the job, and loaded
/// at start (`load`); on several nodes sharing the store, a node asked for a job it has no fresh entry of reads the
/// entry another node wrote (`loadStored`). A finished fetch job found through dedupe with no entry anywhere counts as
/// stale, so it is revalidated before it is served.
final class FetchCache: Sendable {
    /// The tag of jobs fetch-through creates (API.md).
    static let tag = "fetch"

    struct Entry: Sendable, Equatable {
        var jobID: String
        var key: String
        var freshness: Freshness
        /// Seconds fresh after each answer of the origin.
        var lifetime: Double
        var lastUsed: Date
        /// The last use written to the store (uses are written at most a minute apart).
        var storedUse: Date

        var record: FetchEntryRecord {
            FetchEntryRecord(jobID: jobID, cacheKey: key, freshUntil: freshness.freshUntil,
                             staleIfErrorUntil: freshness.staleIfErrorUntil, lifetime: lifetime, lastUsed: lastUsed)
        }
    }

    private struct Contents {
        /// The job whose file answers each key.
        var current: [String: String] = [:]
        /// By job id: the origin's policy and when it answered, recorded as it responds.
        var responses: [String: (policy: OriginCachePolicy, at: Date)] = [:]
        var entries: [String: Entry] = [:]
    }

    let settings: FetchSettings
    private let now: @Sendable () -> Date
    private let contents = Mutex(Contents())
    /// Where entries are kept; nil: memory only (tests).
    private let writer: FetchEntryWriter?
    private let store: (any JobStore)?

    init(settings: FetchSettings, store: (any JobStore)? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.now = now
        writer = store.map(FetchEntryWriter.init(store:))
        self.store = store
    }

    /// The entries the store kept, at start, for the jobs still there.
    func load(_ records: [FetchEntryRecord], jobs: Set<String>) {
        contents.withLock { contents in
            for record in records where jobs.contains(record.jobID) {
                contents.current[record.cacheKey] = record.jobID
                contents.entries[record.jobID] = Entry(
                    jobID: record.jobID, key: record.cacheKey,
                    freshness: Freshness(freshUntil: record.freshUntil, staleIfErrorUntil: record.staleIfErrorUntil),
                    lifetime: record.lifetime, lastUsed: record.lastUsed, storedUse: record.lastUsed)
            }
        }
    }

    /// A fetch job's origin answered (other jobs are not recorded). A plain fetch's response that may be kept gets its
    /// entry at once, in the store too, so every node serving the file knows how long it is fresh; a revalidation's
    /// conditional job (its dedupe key is not the cache key) gets one when it takes the key (`entry(for:key:)`).
    func responded(_ job: JobRecord, _ metadata: TransferMetadata) {
        guard job.tags.contains(Self.tag) else { return }
        let at = now()
        let policy = OriginCachePolicy.parse(cacheControl: metadata.caching.cacheControl, expires: metadata.caching.expires,
                                             date: metadata.caching.date, receivedAt: at)
        let made: Entry? = contents.withLock { contents in
            contents.responses[job.id] = (policy, at)
            guard !policy.noStore, job.headers.isEmpty, contents.entries[job.id] == nil else { return nil }
            let entry = Entry(jobID: job.id, key: job.dedupeKey, freshness: Freshness(policy: policy, receivedAt: at, settings: settings),
                              lifetime: policy.lifetime(defaultMaxAge: settings.maxAge), lastUsed: at, storedUse: at)
            contents.entries[job.id] = entry
            return entry
        }
        if let made { writer?.save(made.record) }
    }

    /// Takes the entry the store holds for `jobID` when this node has none, or one less fresh (another node made it,
    /// or refreshed it with a revalidation): several nodes share the store. Asked before an entry is judged stale.
    func loadStored(jobID: String) async {
        guard let store else { return }
        let known = contents.withLock { $0.entries[jobID]?.freshness.freshUntil }
        if let known, known > now() { return }
        guard let record = try? await store.fetchEntries().first(where: { $0.jobID == jobID }) else { return }
        contents.withLock { contents in
            if let current = contents.entries[jobID], current.freshness.freshUntil >= record.freshUntil { return }
            let lastUsed = max(record.lastUsed, contents.entries[jobID]?.lastUsed ?? record.lastUsed)
            contents.entries[jobID] = Entry(
                jobID: jobID, key: record.cacheKey,
                freshness: Freshness(freshUntil: record.freshUntil, staleIfErrorUntil: record.staleIfErrorUntil),
                lifetime: record.lifetime, lastUsed: lastUsed, storedUse: record.lastUsed)
        }
    }

    /// Whether the origin allowed keeping the job's response (`no-store` and `private` do not).
    func mayKeep(jobID: String) -> Bool {
        contents.withLock { $0.responses[jobID]?.policy.noStore != true }
    }

    /// The job holding the current file of `key`, if any was recorded.
    func currentJob(forKey key: String) -> String? {
        contents.withLock { $0.current[key] }
    }

    /// The entry of a finished job (`job`) serving `key`, made current; one not recorded (found through job dedupe,
    /// after a restart, or created through the API) is stale from now, so it is revalidated before it is served.
    func entry(for job: JobRecord, key: String) -> Entry {
        let at = now()
        let (entry, made) = contents.withLock { contents in
            contents.current[key] = job.id
            if var entry = contents.entries[job.id] {
                guard entry.key != key else { return (entry, false) }
                entry.key = key  // made under another key (`responded` takes the job's dedupe key): it follows the key served
                contents.entries[job.id] = entry
                return (entry, true)
            }
            let (policy, received) = contents.responses[job.id] ?? (OriginCachePolicy(), at)
            var freshness = Freshness(policy: policy, receivedAt: received, settings: settings)
            if contents.responses[job.id] == nil {
                freshness = Freshness(freshUntil: at, staleIfErrorUntil: at.addingTimeInterval(settings.staleIfError))
            }
            let entry = Entry(jobID: job.id, key: key, freshness: freshness,
                              lifetime: policy.lifetime(defaultMaxAge: settings.maxAge), lastUsed: at, storedUse: at)
            contents.entries[job.id] = entry
            return (entry, true)
        }
        if made { writer?.save(entry.record) }
        return entry
    }

    /// When the job's entry was last served; nil when it has no entry here.
    func lastUsed(jobID: String) -> Date? {
        contents.withLock { $0.entries[jobID]?.lastUsed }
    }

    /// The entry was served now.
    func used(jobID: String) {
        let at = now()
        let changed: Entry? = contents.withLock { contents in
            guard var entry = contents.entries[jobID] else { return nil }
            entry.lastUsed = at
            let due = at.timeIntervalSince(entry.storedUse) >= 60
            if due { entry.storedUse = at }
            contents.entries[jobID] = entry
            return due ? entry : nil
        }
        if let changed { writer?.save(changed.record) }
    }

    /// The origin confirmed the entry (`304`): fresh again from now, under its policy as first given.
    func refreshed(jobID: String) {
        let at = now()
        let changed: Entry? = contents.withLock { contents in
            guard var entry = contents.entries[jobID] else { return nil }
            entry.freshness = Freshness(policy: OriginCachePolicy(maxAge: entry.lifetime), receivedAt: at, settings: settings)
            entry.lastUsed = at
            entry.storedUse = at
            contents.entries[jobID] = entry
            return entry
        }
        if let changed { writer?.save(changed.record) }
    }

    /// `jobID` now holds `key`'s file (a revalidation brought a new body); returns the job it replaces, if another.
    func replace(key: String, with jobID: String) -> String? {
        contents.withLock { contents in
            let old = contents.current[key]
            contents.current[key] = jobID
            return old == jobID ? nil : old
        }
    }

    /// Forgets a job (deleted, failed, evicted, or not to be kept).
    func forget(jobID: String) {
        let had = contents.withLock { contents in
            contents.responses.removeValue(forKey: jobID)
            for (key, id) in contents.current where id == jobID { contents.current.removeValue(forKey: key) }
            return contents.entries.removeValue(forKey: jobID) != nil
        }
        if had { writer?.delete(jobID: jobID) }
    }

    /// Returns once every entry change so far is in the store.
    func flush() async {
        await writer?.finish()
    }

    /// The ids of entries, least recently used first (for eviction under the spool quota).
    func leastRecentlyUsed() -> [String] {
        contents.withLock { $0.entries.values.sorted { $0.lastUsed < $1.lastUsed }.map(\.jobID) }
    }
}
