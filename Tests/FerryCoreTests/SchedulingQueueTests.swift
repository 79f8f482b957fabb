import Testing
@testable import FerryCore

@Suite struct SchedulingQueueTests {
    @Test func priorityBeatsAge() {
        var queue = SchedulingQueue<String>(maxActive: 1, maxPerHost: 6)
        queue.enqueue("old", host: "a", priority: 0, sequence: 1)
        queue.enqueue("urgent", host: "b", priority: 5, sequence: 2)
        #expect(queue.nextToStart() == ["urgent"])
        queue.finish("urgent")
        #expect(queue.nextToStart() == ["old"])
    }

    @Test func equalPriorityIsFIFOBySequence() {
        var queue = SchedulingQueue<Int>(maxActive: 10, maxPerHost: 10)
        queue.enqueue(3, host: "h", priority: 1, sequence: 30)
        queue.enqueue(1, host: "h", priority: 1, sequence: 10)
        queue.enqueue(2, host: "h", priority: 1, sequence: 20)
        queue.enqueue(0, host: "h", priority: -1, sequence: 0)
        #expect(queue.waitingIDs == [1, 2, 3, 0])
        #expect(queue.nextToStart() == [1, 2, 3, 0])
    }

    @Test func perHostCapSkipsToTheNextHost() {
        var queue = SchedulingQueue<String>(maxActive: 4, maxPerHost: 2)
        queue.enqueue("a1", host: "a.example", priority: 0, sequence: 1)
        queue.enqueue("a2", host: "a.example", priority: 0, sequence: 2)
        queue.enqueue("a3", host: "A.EXAMPLE", priority: 0, sequence: 3)
        queue.enqueue("b1", host: "b.example", priority: 0, sequence: 4)
        #expect(queue.nextToStart() == ["a1", "a2", "b1"])
        #expect(queue.activeCount(host: "a.example") == 2)
        #expect(queue.waitingIDs == ["a3"])
        queue.finish("a1")
        #expect(queue.nextToStart() == ["a3"])
    }

    @Test func raisingMaxActiveStartsMore() {
        var queue = SchedulingQueue<Int>(maxActive: 1, maxPerHost: 6)
        for i in 0..<5 { queue.enqueue(i, host: "h\(i)", priority: 0, sequence: Int64(i)) }
        #expect(queue.nextToStart() == [0])
        #expect(queue.nextToStart() == [])
        queue.maxActive = 3
        #expect(queue.nextToStart() == [1, 2])
        queue.maxActive = 1     // lowering stops nothing
        #expect(queue.activeCount == 3)
        queue.finish(0)
        #expect(queue.nextToStart() == [])
        queue.finish(1); queue.finish(2)
        #expect(queue.nextToStart() == [3])
    }

    @Test func removingAnActiveFreesASlot() {
        var queue = SchedulingQueue<Int>(maxActive: 1, maxPerHost: 1)
        queue.enqueue(1, host: "h", priority: 0, sequence: 1)
        queue.enqueue(2, host: "h", priority: 0, sequence: 2)
        #expect(queue.nextToStart() == [1])
        queue.remove(1)
        #expect(!queue.isActive(1))
        #expect(queue.nextToStart() == [2])
    }

    @Test func removingAWaitingIDDropsIt() {
        var queue = SchedulingQueue<Int>(maxActive: 5, maxPerHost: 5)
        queue.enqueue(1, host: "h", priority: 0, sequence: 1)
        queue.enqueue(2, host: "h", priority: 0, sequence: 2)
        queue.remove(1)
        queue.remove(99)
        #expect(queue.waitingCount == 1)
        #expect(queue.nextToStart() == [2])
    }

    @Test func updatePriorityReordersWaiting() {
        var queue = SchedulingQueue<Int>(maxActive: 1, maxPerHost: 5)
        queue.enqueue(1, host: "h", priority: 0, sequence: 1)
        queue.enqueue(2, host: "h", priority: 0, sequence: 2)
        queue.enqueue(3, host: "h", priority: 0, sequence: 3)
        queue.updatePriority(3, 10)
        queue.updatePriority(42, 10)
        #expect(queue.waitingIDs == [3, 1, 2])
        queue.updatePriority(3, 0)
        #expect(queue.waitingIDs == [1, 2, 3])   // age kept
        #expect(queue.nextToStart() == [1])
        queue.updatePriority(1, 99)              // active: no effect
        #expect(queue.isActive(1))
    }

    @Test func finishOnlyAffectsActive() {
        var queue = SchedulingQueue<Int>(maxActive: 1, maxPerHost: 5)
        queue.enqueue(1, host: "h", priority: 0, sequence: 1)
        queue.finish(1)
        #expect(queue.isWaiting(1))
        #expect(queue.nextToStart() == [1])
        queue.finish(1)
        queue.finish(1)
        #expect(queue.activeCount == 0)
        #expect(queue.activeCount(host: "h") == 0)
    }

    @Test func enqueueTwiceRequeuesAndActiveIsIgnored() {
        var queue = SchedulingQueue<Int>(maxActive: 1, maxPerHost: 5)
        queue.enqueue(1, host: "h", priority: 0, sequence: 1)
        queue.enqueue(2, host: "h", priority: 0, sequence: 2)
        queue.enqueue(1, host: "h", priority: 0, sequence: 3)
        #expect(queue.waitingCount == 2)
        #expect(queue.waitingIDs == [2, 1])
        #expect(queue.nextToStart() == [2])
        queue.enqueue(2, host: "h", priority: 9, sequence: 0)
        #expect(queue.activeCount == 1)
        #expect(queue.waitingIDs == [1])
    }

    @Test func capsAreClamped() {
        var queue = SchedulingQueue<Int>(maxActive: -3, maxPerHost: 0)
        #expect(queue.maxActive == 0)
        #expect(queue.maxPerHost == 1)
        queue.enqueue(1, host: "h", priority: 0, sequence: 1)
        #expect(queue.nextToStart() == [])
        queue.maxActive = 5
        queue.maxPerHost = -1
        #expect(queue.maxPerHost == 1)
        queue.enqueue(2, host: "h", priority: 0, sequence: 2)
        #expect(queue.nextToStart() == [1])
    }

    @Test func tiesFallBackToEnqueueOrder() {
        var queue = SchedulingQueue<String>(maxActive: 9, maxPerHost: 9)
        queue.enqueue("x", host: "h", priority: 0, sequence: 5)
        queue.enqueue("y", host: "h", priority: 0, sequence: 5)
        queue.enqueue("w", host: "h", priority: 0, sequence: 5)
        #expect(queue.nextToStart() == ["x", "y", "w"])
    }

    // MARK: Property-style: random operations against a simple reference model.

    /// The obvious, slow implementation the real queue must agree with.
    struct Model {
        var maxActive: Int
        var maxPerHost: Int
        var waiting: [(id: Int, host: String, priority: Int, sequence: Int64, order: Int)] = []
        var active: [Int: String] = [:]
        var counter = 0

        mutating func enqueue(_ id: Int, _ host: String, _ priority: Int, _ sequence: Int64) {
            if active[id] != nil { return }
            waiting.removeAll { $0.id == id }
            waiting.append((id, host, priority, sequence, counter))
            counter += 1
        }

        mutating func remove(_ id: Int) {
            waiting.removeAll { $0.id == id }
            active[id] = nil
        }

        mutating func finish(_ id: Int) { active[id] = nil }

        mutating func updatePriority(_ id: Int, _ priority: Int) {
            if let index = waiting.firstIndex(where: { $0.id == id }) { waiting[index].priority = priority }
        }

        var sorted: [(id: Int, host: String, priority: Int, sequence: Int64, order: Int)] {
            waiting.sorted { a, b in
                if a.priority != b.priority { return a.priority > b.priority }
                if a.sequence != b.sequence { return a.sequence < b.sequence }
                return a.order < b.order
            }
        }

        mutating func nextToStart() -> [Int] {
            var started: [Int] = []
            for entry in sorted {
                guard active.count < maxActive else { break }
                if active.values.filter({ $0 == entry.host }).count < maxPerHost {
                    active[entry.id] = entry.host
                    waiting.removeAll { $0.id == entry.id }
                    started.append(entry.id)
                }
            }
            return started
        }
    }

    @Test(arguments: [1, 2, 3, 42, 2026])
    func agreesWithReferenceModel(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let hosts = ["a", "b", "c", "d"]
        var queue = SchedulingQueue<Int>(maxActive: 3, maxPerHost: 2)
        var model = Model(maxActive: 3, maxPerHost: 2)
        var sequence: Int64 = 0
        for step in 0..<3000 {
            let id = Int.random(in: 0..<30, using: &generator)
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<35:
                let host = hosts.randomElement(using: &generator)!
                let priority = Int.random(in: -2...2, using: &generator)
                // Mostly increasing sequences, sometimes duplicates, to exercise the tie-break.
                if Int.random(in: 0..<5, using: &generator) > 0 { sequence += 1 }
                queue.enqueue(id, host: host, priority: priority, sequence: sequence)
                model.enqueue(id, host, priority, sequence)
            case 35..<45:
                queue.remove(id)
                model.remove(id)
            case 45..<60:
                queue.finish(id)
                model.finish(id)
            case 60..<70:
                let priority = Int.random(in: -2...2, using: &generator)
                queue.updatePriority(id, priority)
                model.updatePriority(id, priority)
            case 70..<75:
                let cap = Int.random(in: 0...6, using: &generator)
                queue.maxActive = cap
                model.maxActive = cap
            default:
                #expect(queue.nextToStart() == model.nextToStart(), "step \(step)")
            }
            #expect(queue.activeCount == model.active.count, "step \(step)")
            #expect(queue.waitingCount == model.waiting.count, "step \(step)")
            #expect(queue.waitingIDs == model.sorted.map(\.id), "step \(step)")
            for host in hosts {
                let count = model.active.values.filter { $0 == host }.count
                #expect(queue.activeCount(host: host) == count)
                #expect(count <= 2)
            }
        }
    }
}
