import FerryStore
import Foundation
import Testing
@testable import FerryService

/// Status objects written once and reused while the job's record and the call's fields stay the same
/// (`Aria2StatusCache`): a list answered again is byte for byte what writing every object would give.
@Suite("aria2 status objects reused")
struct Aria2StatusCacheTests {
    let lists = Aria2ListsTests()
    let status = Aria2Status(directory: "/d")
    let cache = Aria2StatusCache()

    var jobs: [JobRecord] {
        var delivering = lists.job(4, .delivering)
        delivering.bytesReceived = 77
        return [lists.job(1, .waiting), lists.job(2, .paused), lists.job(3, .downloading), delivering,
                lists.job(5, .finished, ended: 3)]
    }

    /// The five jobs' status objects as one list, reusing what the cache has; how many entries came written, how many
    /// objects were written for the cache.
    func answer(_ jobs: [JobRecord], versions: [Int64: UInt64] = [:], fields: Aria2StatusFields, speed: Double = 100)
        -> (bytes: [UInt8], reused: Int, written: Int)
    {
        let all = lists.gathered(jobs, rates: [3: speed], reusing: cache.reusable(for: fields), versions: versions)
        let entries = all.active.sorted + all.waiting.sorted + all.stopped.sorted
        let (list, written) = status.write(entries, at: Array(entries.indices), fields: fields)
        cache.keep(written, jobs: jobs.count)
        let reused = entries.filter { if case .written = $0.content { true } else { false } }.count
        return (list.bytes, reused, written.count)
    }

    /// The same list with every object written from its record.
    func fresh(_ jobs: [JobRecord], fields: Aria2StatusFields, speed: Double = 100) -> [UInt8] {
        let all = lists.gathered(jobs, rates: [3: speed])
        let entries = all.active.sorted + all.waiting.sorted + all.stopped.sorted
        return status.write(entries, at: Array(entries.indices), fields: fields).list.bytes
    }

    @Test func aListAnsweredAgainReusesTheObjectsOfJobsThatDidNotChange() {
        let fields = Aria2StatusFields(keys: ["gid", "status", "downloadSpeed", "completedLength", "connections"])
        let first = answer(jobs, fields: fields)
        #expect(first.bytes == fresh(jobs, fields: fields))
        #expect(first.reused == 0 && first.written == 4, "every job but the downloading one is kept")
        let second = answer(jobs, fields: fields, speed: 250)
        #expect(second.reused == 4 && second.written == 0)
        #expect(second.bytes == fresh(jobs, fields: fields, speed: 250), "the downloading job's speed is always its own")
        #expect(second.bytes != first.bytes)
    }

    @Test func aChangedRecordOrOtherFieldsAreWrittenAgain() {
        let fields = Aria2StatusFields(keys: ["gid", "status", "completedLength"])
        _ = answer(jobs, fields: fields)
        var changed = jobs
        changed[3].bytesReceived = 99
        let after = answer(changed, versions: [4: 2], fields: fields)
        #expect(after.reused == 3 && after.written == 1)
        #expect(after.bytes == fresh(changed, fields: fields))
        let other = answer(changed, versions: [4: 2], fields: .all)
        #expect(other.reused == 0 && other.written == 4 && other.bytes == fresh(changed, fields: .all))
        #expect(answer(changed, versions: [4: 2], fields: .all).reused == 4)
    }

    @Test func theCacheKeepsAtMostTwiceTheJobsAndSome() {
        func written(_ gids: Range<UInt64>) -> [(gid: UInt64, fragment: Aria2StatusCache.Fragment)] {
            gids.map { ($0, Aria2StatusCache.Fragment(version: 1, fields: .all, bytes: [1])) }
        }
        cache.keep(written(0..<50), jobs: 10)
        #expect(cache.count == 50 && Aria2StatusCache.bound(jobs: 10) == 84)
        cache.keep(written(50..<100), jobs: 10)
        #expect(cache.count == 50, "past the bound only the last call's objects stay")
        cache.keep(written(50..<60), jobs: 10)
        #expect(cache.count == 50)
    }
}

/// Whole list answers kept while the list's states do not change (`Aria2ListCache`).
@Suite("aria2 list answers reused")
struct Aria2ListCacheTests {
    @Test func anAnswerIsReusedForTheSameQuestionWhileItsStatesDoNotChange() {
        let cache = Aria2ListCache()
        func question(_ offset: Int64, key: String? = nil) -> Aria2ListCache.Question {
            .init(stopped: false, offset: offset, num: 1000, fields: [.gid], onlyKey: key)
        }
        #expect(cache.answer(question(0), change: 5) == nil)
        cache.keep(.json([1]), for: question(0), change: 5)
        #expect(cache.answer(question(0), change: 5) == .json([1]))
        #expect(cache.answer(question(0), change: 6) == nil, "the states changed since")
        #expect(cache.answer(question(1), change: 5) == nil && cache.answer(question(0, key: "k"), change: 5) == nil)
        cache.keep(.json([2]), for: question(0), change: 6)
        #expect(cache.answer(question(0), change: 6) == .json([2]) && cache.count == 1)
        for offset in 1..<Int64(Aria2ListCache.limit) { cache.keep(.json([3]), for: question(offset), change: 6) }
        #expect(cache.count == Aria2ListCache.limit)
        cache.keep(.json([4]), for: question(99), change: 6)
        #expect(cache.count == 1 && cache.answer(question(0), change: 6) == nil, "past the limit, only the newest stays")
    }
}
