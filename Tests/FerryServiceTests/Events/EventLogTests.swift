import Foundation
import Testing
@testable import FerryService

@Suite struct EventLogTests {
    typealias F = EventFixture

    private func events(_ replay: EventLog.Replay) -> [ServerEvent]? {
        if case .events(let list) = replay { return list }
        return nil
    }

    private func ids(_ replay: EventLog.Replay) -> [Int64]? { events(replay)?.map(\.id) }

    /// base 100: job a(101), progress a(102), job b(103), progress a(104), progress b(105),
    /// job a(106) supersedes a's progress, progress b(107), removed c(108), progress d(109).
    private func sample() -> EventLog {
        var log = EventLog(startingAfter: 100)
        for event in [F.job(101, "a"), F.progress(102, "a"), F.job(103, "b"), F.progress(104, "a"),
                      F.progress(105, "b"), F.job(106, "a"), F.progress(107, "b"), F.removed(108, "c"),
                      F.progress(109, "d")] {
            log.append(event)
        }
        return log
    }

    @Test func replayGivesMissedJobEventsAndLatestProgressInOrder() {
        let log = sample()
        #expect(ids(log.replay(after: 100, lastAllocated: 109)) == [101, 103, 106, 107, 108, 109])
        #expect(ids(log.replay(after: 103, lastAllocated: 109)) == [106, 107, 108, 109])
        #expect(ids(log.replay(after: 106, lastAllocated: 109)) == [107, 108, 109])
        #expect(ids(log.replay(after: 107, lastAllocated: 109)) == [108, 109])
        let replayed = events(log.replay(after: 102, lastAllocated: 109)) ?? []
        #expect(replayed.map(\.kind) == [.job, .job, .progress, .removed, .progress])
        #expect(replayed.map(\.jobID) == ["b", "a", "b", "c", "d"])
    }

    @Test func replayAfterTheNewestIsEmpty() {
        let log = sample()
        #expect(log.replay(after: 109, lastAllocated: 109) == .events([]))
        #expect(log.newestID == 109)
    }

    @Test func latestProgressIsKeptPerJobAndSupersededByJobEvents() {
        var log = sample()
        #expect(log.latestProgress(forJob: "a") == nil)          // superseded by job 106
        #expect(log.latestProgress(forJob: "b")?.id == 107)      // 105 replaced by 107
        #expect(log.latestProgress(forJob: "d")?.id == 109)
        #expect(log.progressCount == 2)
        log.append(F.removed(110, "d"))
        #expect(log.latestProgress(forJob: "d") == nil)
        #expect(ids(log.replay(after: 108, lastAllocated: 110)) == [110])
    }

    @Test func allocatedButNotYetAppendedIdIsValidAndWaits() {
        var log = sample()
        // The list reported 111 (allocated) before events 110 and 111 reached the log.
        #expect(log.replay(after: 111, lastAllocated: 111) == .events([]))
        #expect(log.replay(after: 110, lastAllocated: 111) == .events([]))
        log.append(F.job(110, "b"))
        log.append(F.job(111, "e"))
        log.append(F.job(112, "b"))
        #expect(ids(log.replay(after: 111, lastAllocated: 112)) == [112])
        #expect(ids(log.replay(after: 110, lastAllocated: 112)) == [111, 112])
    }

    @Test func unissuedAndNegativeIdsReset() {
        let log = sample()
        #expect(log.replay(after: 110, lastAllocated: 109) == .reset)
        #expect(log.replay(after: Int64.max, lastAllocated: 109) == .reset)
        #expect(log.replay(after: -1, lastAllocated: 109) == .reset)
        #expect(log.replay(after: 109, lastAllocated: 109) != .reset)
    }

    @Test func idsFromAPreviousRunResetButTheBaseItselfIsValid() {
        var log = EventLog(startingAfter: 500)
        // Before this run's first event the list reports Ferry-Event-Id 500: valid, nothing missed.
        #expect(log.replay(after: 500, lastAllocated: 500) == .events([]))
        #expect(log.replay(after: 499, lastAllocated: 500) == .reset)
        #expect(log.replay(after: 0, lastAllocated: 500) == .reset)
        log.append(F.job(501, "a"))
        #expect(ids(log.replay(after: 500, lastAllocated: 501)) == [501])
        #expect(log.replay(after: 499, lastAllocated: 501) == .reset)
    }

    @Test func freshServerAcceptsZero() {
        var log = EventLog(startingAfter: 0)
        #expect(log.replay(after: 0, lastAllocated: 0) == .events([]))
        log.append(F.job(1, "a"))
        #expect(ids(log.replay(after: 0, lastAllocated: 1)) == [1])
    }

    @Test func windowEvictsOldestAndTooOldIdsReset() {
        var log = EventLog(startingAfter: 0, capacity: 3)
        // job 1, progress 2, job 3, progress 4, job 5, job 6, job 7: job 1 and 3 are evicted.
        for event in [F.job(1, "a"), F.progress(2, "x"), F.job(3, "b"), F.progress(4, "y"),
                      F.job(5, "c"), F.job(6, "d"), F.job(7, "e")] {
            log.append(event)
        }
        #expect(log.count == 3)
        #expect(log.oldestKeptID == 5)
        #expect(log.evictedThrough == 3)
        #expect(log.replay(after: 0, lastAllocated: 7) == .reset)
        #expect(log.replay(after: 2, lastAllocated: 7) == .reset)
        // The client saw event 3, the newest evicted one: nothing it lacks was evicted.
        #expect(ids(log.replay(after: 3, lastAllocated: 7)) == [4, 5, 6, 7])
        #expect(ids(log.replay(after: 4, lastAllocated: 7)) == [5, 6, 7])
        #expect(ids(log.replay(after: 6, lastAllocated: 7)) == [7])
    }

    @Test func progressOlderThanTheWindowIsStillReplayed() {
        var log = EventLog(startingAfter: 0, capacity: 2)
        log.append(F.progress(1, "slow"))
        for id in Int64(2)...10 { log.append(F.job(id, "j\(id)")) }
        #expect(log.evictedThrough == 8)
        #expect(ids(log.replay(after: 8, lastAllocated: 10)) == [9, 10])
        // Progress 1 is older than the window, yet a client after 0 could not be served anyway (reset).
        #expect(log.replay(after: 0, lastAllocated: 10) == .reset)
        #expect(log.latestProgress(forJob: "slow")?.id == 1)
    }

    @Test func longRunsStayBoundedAndOrdered() {
        var log = EventLog(startingAfter: 0, capacity: 100)
        for id in Int64(1)...10_000 { log.append(F.job(id, "j\(id % 7)")) }
        #expect(log.count == 100)
        #expect(log.oldestKeptID == 9_901)
        #expect(log.evictedThrough == 9_900)
        #expect(ids(log.replay(after: 9_900, lastAllocated: 10_000)) == Array(9_901...10_000))
        #expect(ids(log.replay(after: 9_990, lastAllocated: 10_000)) == Array(9_991...10_000))
        #expect(log.replay(after: 9_899, lastAllocated: 10_000) == .reset)
    }

    @Test func defaultCapacityIs16384() {
        #expect(EventLog(startingAfter: 0).capacity == 16_384)
        #expect(EventLog.defaultCapacity == 16_384)
    }

    /// Random histories checked against a model computed from the full history.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func replayMatchesAModelOfTheFullHistory(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let base = Int64.random(in: 0...1_000, using: &random)
        let capacity = Int.random(in: 1...40, using: &random)
        var log = EventLog(startingAfter: base, capacity: capacity)
        var history: [ServerEvent] = []
        var nextID = base
        let jobs = (0..<6).map { "j\($0)" }
        for _ in 0..<300 {
            nextID += Int64.random(in: 1...3, using: &random)      // allocated ids may be skipped
            let job = jobs.randomElement(using: &random)!
            let event: ServerEvent
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5: event = F.progress(nextID, job, bytes: Int(nextID))
            case 5..<9: event = F.job(nextID, job)
            default: event = F.removed(nextID, job)
            }
            log.append(event)
            history.append(event)

            let lastAllocated = nextID + Int64.random(in: 0...2, using: &random)
            for lastID in [base - 1, base, nextID, lastAllocated, lastAllocated + 1, -1]
                + (0..<4).map({ _ in Int64.random(in: (base - 5)...(lastAllocated + 2), using: &random) }) {
                #expect(log.replay(after: lastID, lastAllocated: lastAllocated)
                        == Self.model(history, base: base, capacity: capacity, lastID: lastID, lastAllocated: lastAllocated),
                        "seed \(seed), lastID \(lastID)")
            }
        }
    }

    private static func model(_ history: [ServerEvent], base: Int64, capacity: Int, lastID: Int64,
                              lastAllocated: Int64) -> EventLog.Replay {
        let mandatory = history.filter(\.isMandatory)
        let evicted = mandatory.dropLast(capacity)
        if lastID < 0 || lastID < base || lastID > lastAllocated { return .reset }
        if evicted.contains(where: { $0.id > lastID }) { return .reset }
        var result = mandatory.filter { $0.id > lastID }
        for job in Set(history.compactMap(\.jobID)) {
            let ofJob = history.filter { $0.jobID == job }
            if let last = ofJob.last, last.kind == .progress, last.id > lastID { result.append(last) }
        }
        return .events(result.sorted { $0.id < $1.id })
    }

    @Test func appendingAnOlderIdIsAProgrammerError() async {
        await #expect(processExitsWith: .failure) {
            var log = EventLog(startingAfter: 0)
            log.append(EventFixture.job(2, "a"))
            log.append(EventFixture.job(2, "b"))
        }
    }
}
