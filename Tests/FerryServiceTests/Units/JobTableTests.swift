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
        var seen: [String: (JobState, Double?, String)] = [:]
        table.forEachShown { job, rates, gid in seen[job.id] = (job.state, rates?.speed, gid) }
        #expect(seen.count == 2)
        #expect(seen["a"]?.0 == .downloading && seen["a"]?.1 == 5 && seen["a"]?.2 == JobGID.of("a"))
        #expect(seen["b"]?.0 == .waiting && seen["b"]?.1 == nil && seen["b"]?.2 == JobGID.of("b"))
        #expect(table.jobs.removeValue(forKey: "b") != nil && table.id(ofGID: JobGID.of("b")) == nil)
        var count = 0
        table.forEachShown { _, _, _ in count += 1 }
        #expect(count == 1)
    }
}
