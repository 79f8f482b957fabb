import Foundation
import Testing
@testable import FerryService

/// `EventLog.page`: a replay read a bounded piece at a time by a stream that keeps only its position.
@Suite struct EventLogPageTests {
    typealias F = EventFixture

    /// Reads every page after `lastID` (each after the previous one's `through`) until one reaches the end.
    private func readAll(_ log: EventLog, after lastID: Int64, lastAllocated: Int64, filter: EventFilter = .allJobs,
                         maxBytes: Int) -> (events: [ServerEvent], pages: [EventLog.Page])? {
        var position = lastID
        var pages: [EventLog.Page] = []
        while true {
            guard let page = log.page(after: position, lastAllocated: lastAllocated, filter: filter, maxBytes: maxBytes)
            else { return nil }
            pages.append(page)
            #expect(page.through >= position, "a page never reads backwards")
            position = page.through
            if page.reachedEnd || pages.count > 10_000 { break }
        }
        return (pages.flatMap(\.events), pages)
    }

    /// A random log of job, progress and removed events over a few jobs.
    private func randomLog(seed: UInt64, count: Int, capacity: Int = EventLog.defaultCapacity) -> EventLog {
        var generator = SeededGenerator(seed: seed)
        var log = EventLog(startingAfter: 0, capacity: capacity)
        for id in 1...Int64(count) {
            let job = "j\(Int.random(in: 0..<6, using: &generator))"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4: log.append(F.job(id, job, String(repeating: "n", count: Int.random(in: 0..<300, using: &generator))))
            case 4..<9: log.append(F.progress(id, job, bytes: Int(id)))
            default: log.append(F.removed(id, job))
            }
        }
        return log
    }

    @Test func pagesReadInTurnGiveTheReplayOnceInOrder() throws {
        for seed in UInt64(1)...20 {
            let log = randomLog(seed: seed, count: 400)
            for start in [Int64(0), 37, 200, 399, 400] {
                guard case .events(let replay) = log.replay(after: start, lastAllocated: 400) else {
                    Issue.record("replay after \(start) reset"); continue
                }
                for maxBytes in [1, 200, 2_000, 1 << 20] {
                    let read = try #require(readAll(log, after: start, lastAllocated: 400, maxBytes: maxBytes))
                    #expect(read.events == replay, "seed \(seed), after \(start), pages of \(maxBytes) bytes")
                }
            }
        }
    }

    @Test func aPageStopsAtItsByteBoundAndTheFilterApplies() throws {
        let log = randomLog(seed: 7, count: 2_000)
        let read = try #require(readAll(log, after: 0, lastAllocated: 2_000, maxBytes: 4_096))
        #expect(read.pages.count > 10)
        for page in read.pages.dropLast() {
            let jobBytes = page.events.filter(\.isMandatory).reduce(0) { $0 + $1.frame.count }
            let largest = page.events.map(\.frame.count).max() ?? 0
            #expect(jobBytes < 4_096 + largest, "a page ends with the event that crosses its bound")
            #expect(!page.reachedEnd)
        }
        #expect(read.pages.last?.through == 2_000)
        let filter = EventFilter.jobs(["j1", "j4"])
        let filtered = try #require(readAll(log, after: 0, lastAllocated: 2_000, filter: filter, maxBytes: 4_096))
        guard case .events(let replay) = log.replay(after: 0, lastAllocated: 2_000) else { Issue.record("reset"); return }
        #expect(filtered.events == replay.filter(filter.admits))
        #expect(filtered.events.allSatisfy { ["j1", "j4"].contains($0.jobID) })
    }

    @Test func aPositionTheLogEvictedOrNeverIssuedHasNoPage() {
        let log = randomLog(seed: 3, count: 3_000, capacity: 100)
        #expect(log.evictedThrough != nil)
        let evicted = log.evictedThrough ?? 0
        #expect(log.page(after: 0, lastAllocated: 3_000, filter: .allJobs, maxBytes: 1_000) == nil)
        #expect(log.page(after: evicted - 1, lastAllocated: 3_000, filter: .allJobs, maxBytes: 1_000) == nil)
        #expect(log.page(after: evicted, lastAllocated: 3_000, filter: .allJobs, maxBytes: 1_000) != nil)
        #expect(log.page(after: 3_001, lastAllocated: 3_000, filter: .allJobs, maxBytes: 1_000) == nil)
        #expect(log.canReplay(after: 3_000, lastAllocated: 3_000))
        #expect(!log.canReplay(after: -1, lastAllocated: 3_000))
    }

    @Test func aPositionAllocatedButNotYetAppendedReadsAnEmptyLastPage() throws {
        let log = randomLog(seed: 5, count: 50)
        let page = try #require(log.page(after: 52, lastAllocated: 52, filter: .allJobs, maxBytes: 1_000))
        #expect(page.events.isEmpty && page.reachedEnd && page.through == 52)
    }
}
