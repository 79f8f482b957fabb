import Foundation
import Testing
@testable import FerryService

@Suite struct EventIDAllocatorTests {
    @Test func startsAfterItsBase() {
        let allocator = EventIDAllocator(startingAfter: 0)
        #expect(allocator.lastAllocated == 0)
        #expect(allocator.next() == 1)
        #expect(allocator.next() == 2)
        #expect(allocator.lastAllocated == 2)
        #expect(allocator.base == 0)
    }

    @Test func idsKeepIncreasingAcrossRunsStartedFromAPersistedBase() {
        var persistedHighWater: Int64 = 0
        var issued: [Int64] = []
        for _ in 0..<3 {
            // What the service does at start-up: a base no earlier run issued.
            let allocator = EventIDAllocator(startingAfter: persistedHighWater + 1)
            for _ in 0..<5 { issued.append(allocator.next()) }
            persistedHighWater = allocator.lastAllocated
        }
        #expect(issued.count == 15)
        #expect(zip(issued, issued.dropFirst()).allSatisfy { $0 < $1 })
        #expect(issued.first == 2)
        #expect(issued.last == persistedHighWater)
    }

    @Test func concurrentCallersGetDistinctIds() {
        let allocator = EventIDAllocator(startingAfter: 1_000)
        let perWorker = 2_000, workers = 8
        let results = Results(workers: workers)
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            var mine: [Int64] = []
            mine.reserveCapacity(perWorker)
            for _ in 0..<perWorker { mine.append(allocator.next()) }
            results.set(worker, mine)
        }
        let all = results.all()
        // Each caller sees its own ids increase.
        for ids in all { #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }) }
        let flat = all.flatMap { $0 }
        #expect(Set(flat).count == perWorker * workers)
        #expect(flat.min() == 1_001)
        #expect(flat.max() == 1_000 + Int64(perWorker * workers))
        #expect(allocator.lastAllocated == 1_000 + Int64(perWorker * workers))
    }
}

/// Per-worker result slots for the concurrency test (the test's own small lock).
private final class Results: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [[Int64]]
    init(workers: Int) { slots = Array(repeating: [], count: workers) }
    func set(_ worker: Int, _ ids: [Int64]) { lock.lock(); slots[worker] = ids; lock.unlock() }
    func all() -> [[Int64]] { lock.lock(); defer { lock.unlock() }; return slots }
}
