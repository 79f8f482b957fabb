import FerryCore
import FerryEngine
import FerryStore
import Foundation
import Synchronization
import Testing
@testable import FerryService

@Suite("Fetch-through: the cache's entries")
struct FetchCacheTests {
    private final class Clock: Sendable {
        let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func advance(_ seconds: Double) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var now: Date { time.withLock { $0 } }
    }

    private func cache(_ clock: Clock, store: (any JobStore)? = nil) -> FetchCache {
        var settings = FetchSettings()
        settings.maxAge = 3600
        settings.staleIfError = 100
        return FetchCache(settings: settings, store: store, now: { clock.now })
    }

    private func job(_ id: String, tags: [String] = [FetchCache.tag]) -> JobRecord {
        var job = JobRecord(id: id, url: "http://o.test/\(id)", state: .finished, dedupeKey: id, createdAt: Date())
        job.tags = tags
        return job
    }

    private func metadata(_ cacheControl: String?) -> TransferMetadata {
        var metadata = TransferMetadata(finalURL: "http://o.test/x", filename: "x", contentType: nil, bytesExpected: 1,
                                        etag: nil, lastModified: nil, offset: 0)
        metadata.caching = .init(cacheControl: cacheControl)
        return metadata
    }

    @Test func freshForWhatTheOriginSaidThenRefreshedBy304() {
        let clock = Clock()
        let cache = cache(clock)
        cache.responded(job("a"), metadata("max-age=60"))
        let entry = cache.entry(for: job("a"), key: "k")
        #expect(entry.freshness.decision(at: clock.now) == .fresh)
        #expect(cache.currentJob(forKey: "k") == "a")
        clock.advance(61)
        #expect(cache.entry(for: job("a"), key: "k").freshness.decision(at: clock.now) == .revalidate(mayServeStale: true))
        cache.refreshed(jobID: "a")
        #expect(cache.entry(for: job("a"), key: "k").freshness.decision(at: clock.now) == .fresh)
        clock.advance(60 + 100)
        #expect(cache.entry(for: job("a"), key: "k").freshness.decision(at: clock.now) == .revalidate(mayServeStale: false))
    }

    @Test func anEntryWithoutAnAnswerSeenIsStaleAndOnlyFetchJobsAreRecorded() {
        let clock = Clock()
        let cache = cache(clock)
        cache.responded(job("api", tags: []), metadata("max-age=600"))
        #expect(cache.entry(for: job("api"), key: "k").freshness.decision(at: clock.now) == .revalidate(mayServeStale: true))
        cache.responded(job("private"), metadata("private, max-age=600"))
        #expect(!cache.mayKeep(jobID: "private"))
        #expect(cache.mayKeep(jobID: "api"))
    }

    @Test func replacingAndForgetting() {
        let clock = Clock()
        let cache = cache(clock)
        cache.responded(job("old"), metadata(nil))
        _ = cache.entry(for: job("old"), key: "k")
        #expect(cache.replace(key: "k", with: "new") == "old")
        #expect(cache.replace(key: "k", with: "new") == nil)
        #expect(cache.currentJob(forKey: "k") == "new")
        cache.forget(jobID: "new")
        #expect(cache.currentJob(forKey: "k") == nil)
        clock.advance(5)
        cache.used(jobID: "old")
        #expect(cache.lastUsed(jobID: "old") == clock.now)
        #expect(cache.leastRecentlyUsed() == ["old"])
    }

    @Test func entriesOutliveTheProcessThroughTheStore() async throws {
        let clock = Clock()
        let store: any JobStore = MemoryJobStore()
        _ = try await store.insert([job("a")])
        let first = cache(clock, store: store)
        first.responded(job("a"), metadata("max-age=600"))
        let made = first.entry(for: job("a"), key: "k")
        await first.flush()
        #expect(try await store.fetchEntries() == [made.record.storedForm])
        let second = cache(clock)
        second.load(try await store.fetchEntries(), jobs: ["a"])
        #expect(second.currentJob(forKey: "k") == "a")
        #expect(second.entry(for: job("a"), key: "k").freshness.decision(at: clock.now) == .fresh)
        let third = cache(clock)
        third.load(try await store.fetchEntries(), jobs: [])
        #expect(third.currentJob(forKey: "k") == nil)
    }

    @Test func theNodeRunningAFetchStoresItsEntrySoAnotherNodeServesItFresh() async throws {
        let clock = Clock()
        let store: any JobStore = MemoryJobStore()
        var fetched = job("a")
        fetched.dedupeKey = "k"
        _ = try await store.insert([fetched])
        let running = cache(clock, store: store)
        running.responded(fetched, metadata("max-age=600"))
        running.responded(job("nostore"), metadata("no-store"))
        await running.flush()
        #expect(try await store.fetchEntries().map(\.jobID) == ["a"])
        // Another node: nothing in memory, so stale until it reads the store.
        let other = cache(clock, store: store)
        await other.loadStored(jobID: "a")
        #expect(other.entry(for: fetched, key: "k").freshness.decision(at: clock.now) == .fresh)
        // Stale everywhere; a third node's revalidation refreshes the stored entry, which the other node then takes.
        clock.advance(601)
        #expect(other.entry(for: fetched, key: "k").freshness.decision(at: clock.now) == .revalidate(mayServeStale: true))
        let third = cache(clock, store: store)
        await third.loadStored(jobID: "a")
        third.refreshed(jobID: "a")
        await third.flush()
        await other.loadStored(jobID: "a")
        #expect(other.entry(for: fetched, key: "k").freshness.decision(at: clock.now) == .fresh)
    }

    @Test func anEntryFollowsTheKeyItIsServedUnder() async throws {
        let clock = Clock()
        let cache = cache(clock)
        cache.responded(job("a"), metadata("max-age=60"))  // made under the job's dedupe key, "a"
        #expect(cache.entry(for: job("a"), key: "k").key == "k")
        #expect(cache.entry(for: job("a"), key: "k").freshness.decision(at: clock.now) == .fresh)
    }
}
