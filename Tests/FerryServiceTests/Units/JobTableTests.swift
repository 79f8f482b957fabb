import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("Job table")
struct JobTableTests {
    func job(_ id: String, _ state: JobState) -> JobRecord {
        JobRecord(id: id, url: "https://o.example/\(id)", state: state, dedupeKey: id, createdAt: Date())
    }

    @Test func readersSeeEveryChangeWithItsRates() throws {
        let table = JobTable()
        #expect(table.entry("a") == nil)
        #expect(table.jobs.updateValue(job("a", .waiting), forKey: "a") == nil)
        table.jobs["b"] = job("b", .paused)
        table.rates["a"] = LiveRates(speed: 100, eta: 3)
        let (a, rates) = try #require(table.entry("a"))
        #expect(a.state == .waiting && rates == LiveRates(speed: 100, eta: 3))
        #expect(table.entry("b").map { $0.1 == nil } == true)
        #expect(table.jobs.values.count == 2 && table.rates.values.count == 1)
        var changed = try #require(table.jobs["a"])
        changed.state = .downloading
        table.jobs["a"] = changed
        #expect(table.entry("a")?.0.state == .downloading)
        #expect(table.jobs.removeValue(forKey: "a")?.id == "a")
        table.rates["a"] = nil
        #expect(table.entry("a") == nil && table.jobs["a"] == nil)
    }

    /// `/metrics` reads it: states as readers see them (an end held back counts as what it shows), a key's own jobs.
    @Test func aTallyCountsStatesAndSpeedsAsReadersSeeThem() {
        let table = JobTable()
        var keyed = job("k", .downloading)
        keyed.ownerKey = "key1"
        table.jobs["k"] = keyed
        table.rates["k"] = LiveRates(speed: 10, eta: nil)
        table.jobs["a"] = job("a", .downloading)
        table.rates["a"] = LiveRates(speed: 32, eta: 1)
        table.jobs["w"] = job("w", .waiting)
        _ = table.holdBack("a", showing: job("a", .downloading), after: 3)
        table.jobs["a"] = job("a", .finished)
        let all = table.tally()
        #expect(all.counts == [.downloading: 2, .waiting: 1] && all.speed == 42)
        let mine = table.tally(onlyKey: "key1")
        #expect(mine.counts == [.downloading: 1] && mine.speed == 10)
        #expect(table.tally(onlyKey: "nobody").counts.isEmpty)
        table.setLeasesHeld(3)
        #expect(table.leasesHeld == 3)
    }

    @Test func readsFromOtherThreadsWhileTheOwnerWrites() async {
        let table = JobTable()
        table.jobs["x"] = job("x", .downloading)
        await withTaskGroup(of: Int.self) { group in
            group.addTask {
                for n in 0..<2_000 {
                    var record = table.jobs["x"]!
                    record.bytesReceived = Int64(n)
                    table.jobs["x"] = record
                    table.rates["x"] = LiveRates(speed: Double(n), eta: nil)
                }
                return 0
            }
            group.addTask {
                var seen = 0
                for _ in 0..<2_000 where table.entry("x") != nil { seen += 1 }
                return seen
            }
            var total = 0
            for await count in group { total += count }
            #expect(total == 2_000)
        }
        #expect(table.entry("x")?.0.bytesReceived == 1_999)
    }

    @Test func anEndHeldBackShowsTheLastDurableRecordUntilItsLatestHoldEnds() throws {
        let table = JobTable()
        table.jobs["a"] = job("a", .downloading)
        table.rates["a"] = LiveRates(speed: 5, eta: 1)
        let first = table.holdBack("a", showing: job("a", .downloading), after: 7)
        table.jobs["a"] = job("a", .delivering)
        let second = table.holdBack("a", showing: job("a", .delivering), after: 9)
        table.jobs["a"] = job("a", .finished)
        // Readers see the record from before the first hold, without rates; the owner sees its own.
        #expect(table.entry("a")?.0.state == .downloading && table.entry("a")?.1 == nil)
        #expect(table.shown("a")?.state == .downloading && table.jobs["a"]?.state == .finished)
        #expect(table.heldAfter() == 7, "the first hold's events are what readers see")
        table.release("a", hold: first)
        #expect(table.entry("a")?.0.state == .downloading)
        table.release("a", hold: second)
        #expect(table.entry("a")?.0.state == .finished && table.shown("a")?.state == .finished)
        #expect(table.heldAfter() == nil)
        // A removed job takes its hold with it: a job of the same id later is shown as it is.
        _ = table.holdBack("a", showing: job("a", .downloading), after: 7)
        #expect(table.jobs.removeValue(forKey: "a") != nil)
        table.jobs["a"] = job("a", .waiting)
        #expect(table.entry("a")?.0.state == .waiting)
    }

    @Test func aPassOverTheTableShowsEachJobAsListsDoWithItsGID() {
        let table = JobTable()
        table.jobs["a"] = job("a", .downloading)
        table.jobs["b"] = job("b", .waiting)
        table.rates["a"] = LiveRates(speed: 5, eta: 1)
        _ = table.holdBack("a", showing: job("a", .downloading), after: 7)
        table.jobs["a"] = job("a", .finished)
        var seen: [String: (JobState, Double?, String, UInt64)] = [:]
        table.forEachListed { listing, shown, rates in
            let job = shown()
            #expect(job.state == listing.state && job.sequence == listing.sequence)
            seen[job.id] = (listing.state, rates()?.speed, JobGID.text(listing.gid), listing.version)
        }
        #expect(seen.count == 2)
        #expect(seen["a"]?.0 == .downloading && seen["a"]?.1 == 5 && seen["a"]?.2 == JobGID.of("a"))
        #expect(seen["b"]?.0 == .waiting && seen["b"]?.1 == nil && seen["b"]?.2 == JobGID.of("b"))
        #expect(table.jobs.removeValue(forKey: "b") != nil && table.id(ofGID: JobGID.of("b")) == nil)
        var count = 0
        table.forEachListed { _, _, _ in count += 1 }
        #expect(count == 1)
    }

    @Test func aListingFollowsTheRecordReadersSeeWithANewVersionAtEachChange() throws {
        let table = JobTable()
        func listing(_ id: String) -> JobListing? {
            var found: JobListing?
            table.forEachListed { listing, shown, _ in if shown().id == id { found = listing } }
            return found
        }
        table.jobs["a"] = job("a", .waiting)
        let first = try #require(listing("a"))
        #expect(first.state == .waiting && first.gid == JobGID.value(JobGID.of("a")))
        table.jobs["a"] = job("a", .downloading)
        let second = try #require(listing("a"))
        #expect(second.state == .downloading && second.version > first.version && second.gid == first.gid)
        // An end held back: the listing stays the held record's until the hold is released.
        let hold = table.holdBack("a", showing: job("a", .downloading), after: 3)
        table.jobs["a"] = job("a", .finished)
        let held = try #require(listing("a"))
        #expect(held.state == .downloading)
        table.release("a", hold: hold)
        let released = try #require(listing("a"))
        #expect(released.state == .finished && released.version > held.version)
        #expect(table.jobs.removeValue(forKey: "a") != nil && listing("a") == nil)
        table.jobs["a"] = job("a", .waiting)
        #expect(try #require(listing("a")).version > released.version, "never reused, even for an id seen before")
    }

    @Test func aPassForOneKeyListsThatKeysJobsOnly() {
        let table = JobTable()
        for (id, owner) in [("a", "k1"), ("b", "k2"), ("c", nil), ("d", "k1")] as [(String, String?)] {
            var record = job(id, .waiting)
            record.ownerKey = owner
            table.jobs[id] = record
        }
        func ids(_ key: String?) -> Set<String> {
            var seen: Set<String> = []
            table.forEachListed(onlyKey: key) { _, shown, _ in seen.insert(shown().id) }
            return seen
        }
        #expect(ids(nil) == ["a", "b", "c", "d"] && ids("k1") == ["a", "d"] && ids("k2") == ["b"] && ids("k3") == [])
    }

    @Test func aStateShowsAChangeWhenAJobEntersChangesInOrLeavesIt() {
        let table = JobTable()
        table.jobs["a"] = job("a", .waiting)
        let entered = table.lastChange(among: [.waiting])
        #expect(entered > 0 && table.lastChange(among: [.finished]) == 0)
        table.jobs["b"] = job("b", .finished)
        #expect(table.lastChange(among: [.waiting]) == entered, "a change in another state is not one here")
        var changed = job("a", .waiting)
        changed.priority = 3
        table.jobs["a"] = changed
        let within = table.lastChange(among: [.waiting])
        #expect(within > entered)
        table.jobs["a"] = job("a", .downloading)
        let left = table.lastChange(among: [.waiting, .paused])
        #expect(left > within && table.lastChange(among: [.downloading]) == left)
        // An end held back shows in its new state when the hold is released.
        let hold = table.holdBack("a", showing: job("a", .downloading), after: 1)
        table.jobs["a"] = job("a", .finished)
        let before = table.lastChange(among: [.finished, .failed])
        table.release("a", hold: hold)
        let released = table.lastChange(among: [.finished, .failed])
        #expect(released > before)
        #expect(table.jobs.removeValue(forKey: "b") != nil && table.lastChange(among: [.finished]) > released)
    }

    @Test func aGIDReadsAsANumberAndBack() {
        for id in (0..<200).map({ "job-\($0)" }) {
            let text = JobGID.of(id)
            #expect(JobGID.text(JobGID.value(text)) == text)
        }
        #expect(JobGID.text(0x0123) == "0000000000000123" && JobGID.value("00000000000000ff") == 255)
    }
}
