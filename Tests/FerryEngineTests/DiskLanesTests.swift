import Dispatch
import Foundation
import Synchronization
import FerryTestSupport
import Testing
@testable import FerryEngine

/// The writers' queues share a fixed set of lanes: at most one thread per lane, however many writers have work, and
/// a lane that stays busy is avoided by the writers made later (issue 32).
@Suite struct DiskLanesTests {
    @Test func choiceGoesRoundRobinFromTheStart() {
        let idle: [UInt64] = [0, 0, 0]
        #expect((0..<7).map { LaneChoice.pick(start: $0, probesSentAt: idle, now: 1_000, stallAfter: 10) } == [0, 1, 2, 0, 1, 2, 0])
        #expect(LaneChoice.pick(start: -4, probesSentAt: idle, now: 1_000, stallAfter: 10) == 2, "a position that wrapped")
    }

    @Test func choiceSkipsALaneWhoseProbeWaitedTooLong() {
        // Lane 1's probe was sent at 900 (100 ago), lane 2's at 995 (5 ago), lane 0 has none waiting.
        let sent: [UInt64] = [0, 900, 995]
        #expect(LaneChoice.pick(start: 1, probesSentAt: sent, now: 1_000, stallAfter: 10) == 2)
        #expect(LaneChoice.pick(start: 2, probesSentAt: sent, now: 1_000, stallAfter: 10) == 2, "5 late is not stalled")
        #expect(LaneChoice.pick(start: 1, probesSentAt: [0, 900, 900], now: 1_000, stallAfter: 10) == 0)
        #expect(LaneChoice.pick(start: 1, probesSentAt: [900, 900, 900], now: 1_000, stallAfter: 10) == 1, "all stalled: its turn")
        #expect(LaneChoice.pick(start: 0, probesSentAt: [1_100], now: 1_000, stallAfter: 10) == 0, "a probe from a later clock reading")
    }

    /// 64 writers' queues with work at once, on 3 lanes: never more than 3 run at a time, and every one runs.
    /// The writers' `LaneQueue`s and the follow streams' `DispatchQueue`s alike.
    @Test(arguments: [true, false]) func manyBusyQueuesRunOnAtMostOneThreadPerLane(laneQueues: Bool) async {
        let lanes = DiskLanes(label: "test.lanes", count: 3)
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        let group = DispatchGroup()
        let queues: [(@escaping @Sendable () -> Void) -> Void] = (0..<64).map { index in
            if laneQueues { return lanes.queue(label: "test.writer.\(index)").async(execute:) }
            let queue = DispatchQueue(label: "test.follow.\(index)", target: lanes.lane())
            return { block in queue.async(execute: block) }
        }
        for async in queues {
            for _ in 0..<2 {
                group.enter()
                async {
                    let now = running.wrappingAdd(1, ordering: .relaxed).newValue
                    most.max(now)
                    usleep(2_000)  // a blocking write
                    running.wrappingSubtract(1, ordering: .relaxed)
                    done.wrappingAdd(1, ordering: .relaxed)
                    group.leave()
                }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(done.load(ordering: .relaxed) == 128)
        #expect(most.load(ordering: .relaxed) <= 3, "at most one thread per lane")
        #expect(most.load(ordering: .relaxed) >= 2, "the lanes run in parallel")
    }

    /// Each spool (each Ferry in a process) has lanes of its own: one Ferry's busy writers never hold another's.
    @Test func eachSpoolHasLanesOfItsOwn() throws {
        let root = try Fixture.tempDirectory("ferry-lanes-test")
        defer { Fixture.removeTree(root) }
        let first = try Spool(root: root + "/a"), second = try Spool(root: root + "/b")
        #expect(first.lanes.writes !== second.lanes.writes)
        #expect(first.lanes.digests !== second.lanes.digests)
        #expect(first.followLanes !== second.followLanes)
        #expect(first.lanes.writes.count == DiskLanes.defaultCount)
    }

    /// A lane held by a write that does not return is skipped by new writers once its probe waited `stallAfter`, and
    /// given out again once it moves.
    @Test func aStalledLaneIsAvoidedUntilItMovesAgain() {
        let lanes = DiskLanes(label: "test.stall", count: 2, stallAfter: .milliseconds(50))
        let first = lanes.lane()  // lane 0 (its probe runs at once)
        let second = lanes.lane()  // lane 1
        #expect(first !== second)
        first.sync {}  // lane 0's probe ran
        let hang = DispatchSemaphore(value: 0)
        DispatchQueue(label: "test.hung-writer", target: first).async { hang.wait() }
        #expect(lanes.lane() === first, "lane 0 is not late yet: its probe waits behind the hung write")
        usleep(150_000)
        let later = (0..<6).map { _ in lanes.lane() }
        #expect(later.allSatisfy { $0 === second }, "every new writer goes to the lane that moves")
        hang.signal()
        first.sync {}  // the hung write and the probe behind it ran
        let after = (0..<4).map { _ in lanes.lane() }
        #expect(after.contains { $0 === first }, "lane 0 is given out again")
    }
}

private extension Atomic<Int> {
    func max(_ value: Int) {
        var current = load(ordering: .relaxed)
        while current < value {
            let (exchanged, original) = compareExchange(expected: current, desired: value, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
