import Foundation
import Testing
@testable import FerryCore

/// The round-robin share of the slots between groups (API keys) with waiting transfers, and each group's own cap
/// (`maxActiveJobs`).
@Suite struct FairShareSchedulingTests {
    @Test func oneGroupsLongQueueDoesNotHoldBackAnothersOneTransfer() {
        var queue = SchedulingQueue<String>(maxActive: 1, maxPerHost: 100)
        for i in 0..<10_000 { queue.enqueue("a\(i)", host: "h", priority: 0, sequence: Int64(i), group: "a") }
        queue.enqueue("b0", host: "h", priority: 0, sequence: 20_000, group: "b")
        #expect(queue.nextToStart() == ["a0"])
        queue.finish("a0")
        #expect(queue.nextToStart() == ["b0"])
        queue.finish("b0")
        #expect(queue.nextToStart() == ["a1"])
    }

    @Test func slotsGoRoundTheGroupsInTurnAndPriorityOrdersWithinOne() {
        var queue = SchedulingQueue<String>(maxActive: 6, maxPerHost: 100)
        for i in 0..<5 { queue.enqueue("a\(i)", host: "h", priority: 0, sequence: Int64(i), group: "a") }
        queue.enqueue("urgent", host: "h", priority: 9, sequence: 99, group: "a")
        for i in 0..<5 { queue.enqueue("b\(i)", host: "h", priority: 0, sequence: Int64(10 + i), group: "b") }
        queue.enqueue("admin", host: "h", priority: -5, sequence: 50)
        #expect(queue.nextToStart() == ["urgent", "b0", "admin", "a0", "b1", "a1"])
        #expect(queue.activeCount(group: "a") == 3 && queue.activeCount(group: nil) == 1)
    }

    @Test func theTurnCarriesOverBetweenCalls() {
        var queue = SchedulingQueue<String>(maxActive: 1, maxPerHost: 100)
        for group in ["a", "b", "c"] {
            for i in 0..<3 { queue.enqueue("\(group)\(i)", host: "h", priority: 0, sequence: Int64(i), group: group) }
        }
        var order: [String] = []
        for _ in 0..<9 {
            let started = queue.nextToStart()
            order += started
            for id in started { queue.finish(id) }
        }
        #expect(order == ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"])
    }

    @Test func aGroupAtItsCapWaitsWhileOthersTakeTheSlots() {
        var queue = SchedulingQueue<String>(maxActive: 4, maxPerHost: 100)
        queue.setCap(1, group: "a")
        for i in 0..<4 { queue.enqueue("a\(i)", host: "h", priority: 0, sequence: Int64(i), group: "a") }
        queue.enqueue("b0", host: "h", priority: 0, sequence: 10, group: "b")
        #expect(queue.nextToStart() == ["a0", "b0"])
        #expect(queue.activeCount == 2 && queue.waitingCount == 3)
        queue.finish("a0")
        #expect(queue.nextToStart() == ["a1"])
        // Raised, the cap lets more start; removed, none holds.
        queue.setCap(2, group: "a")
        #expect(queue.nextToStart() == ["a2"])
        queue.setCap(nil, group: "a")
        #expect(queue.nextToStart() == ["a3"])
        // A cap of 0: nothing of the group starts.
        queue.setCap(0, group: "c")
        queue.enqueue("c0", host: "h", priority: 0, sequence: 30, group: "c")
        queue.finish("b0")
        #expect(queue.nextToStart().isEmpty)
        #expect(queue.isWaiting("c0"))
    }

    @Test func removingAGroupsLastWaitingIDKeepsTheTurnsInOrder() {
        var queue = SchedulingQueue<String>(maxActive: 1, maxPerHost: 100)
        queue.enqueue("a0", host: "h", priority: 0, sequence: 0, group: "a")
        queue.enqueue("a1", host: "h", priority: 0, sequence: 1, group: "a")
        queue.enqueue("b0", host: "h", priority: 0, sequence: 2, group: "b")
        queue.enqueue("c0", host: "h", priority: 0, sequence: 3, group: "c")
        #expect(queue.nextToStart() == ["a0"])
        queue.remove("b0")
        queue.finish("a0")
        #expect(queue.nextToStart() == ["c0"])
        queue.finish("c0")
        #expect(queue.nextToStart() == ["a1"])
        #expect(queue.waitingCount == 0)
    }

    /// 1,000 groups with 100 waiting transfers each: a slot freed and filled 20,000 times costs O(groups) each.
    @Test func manyGroupsAreServedQuickly() {
        var queue = SchedulingQueue<Int>(maxActive: 50, maxPerHost: 1_000)
        for group in 0..<1_000 {
            for i in 0..<100 { queue.enqueue(group * 100 + i, host: "h", priority: 0, sequence: Int64(i), group: "k\(group)") }
        }
        let started = Date()
        var running = queue.nextToStart()
        #expect(running.count == 50)
        var served = Set<String>()
        for _ in 0..<20_000 {
            let done = running.removeFirst()
            queue.finish(done)
            let next = queue.nextToStart()
            #expect(next.count == 1)
            served.insert("k\(next[0] / 100)")
            running += next
        }
        #expect(served.count == 1_000)
        #expect(Date().timeIntervalSince(started) < 5)
    }
}
