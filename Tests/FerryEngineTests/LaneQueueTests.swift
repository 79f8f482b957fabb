import Dispatch
import FerryTestSupport
import Foundation
import Synchronization
import Testing
@testable import FerryEngine

/// Queues sharing a lane take turns (`LaneQueue`), and a writer never waits for its digest lane: one busy writer
/// holds up another by at most a turn, never for as long as it is fed (issue 32).
@Suite struct LaneQueueTests {
    /// A queue that is kept fed (every block it runs queues another, like a fast download's runs) lets a block queued
    /// on another queue of its lane run after one turn of its own.
    @Test func aQueueKeptFedHoldsItsLaneForOneTurnOnly() async {
        let lane = DispatchQueue(label: "test.lane")
        let busy = LaneQueue(label: "test.busy", lane: lane)
        let other = LaneQueue(label: "test.other", lane: lane)
        lane.suspend()  // so that both queues have work before either runs (no thread held meanwhile)
        let busyRan = Atomic<Int>(0)
        @Sendable func feed() {
            guard busyRan.wrappingAdd(1, ordering: .relaxed).newValue < 2_000 else { return }
            busy.async(execute: feed)
        }
        for _ in 0..<50 { busy.async(execute: feed) }
        let seenByOther = await withCheckedContinuation { continuation in
            other.async { continuation.resume(returning: busyRan.load(ordering: .relaxed)) }
            lane.resume()
        }
        #expect(seenByOther <= LaneQueue.defaultTurn, "the other queue waited one turn, not \(seenByOther) blocks")
    }

    /// Blocks run in the order they were queued, one at a time, from however many threads they are queued.
    @Test func blocksRunInOrderOneAtATime() async {
        let lane = DispatchQueue(label: "test.lane.order")
        let queue = LaneQueue(label: "test.order", lane: lane, turn: 3)
        let neighbour = LaneQueue(label: "test.neighbour", lane: lane, turn: 1)
        let running = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let order = Mutex<[Int]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<2_000 {
                queue.async {
                    if running.wrappingAdd(1, ordering: .relaxed).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
                    order.withLock { $0.append(index) }
                    running.wrappingSubtract(1, ordering: .relaxed)
                    if index == 1_999 { continuation.resume() }
                }
                if index % 7 == 0 { neighbour.async { usleep(10) } }
            }
        }
        #expect(order.withLock { $0 } == Array(0..<2_000))
        let overlaps = overlapped.load(ordering: .relaxed)
        #expect(!overlaps, "never two blocks at once")
    }

    /// Two writers share one write lane and one digest lane; the digest lane is held (a CPU too slow to hash). A
    /// writer resuming a file has its bytes read back for its digest, and the other writer's writes still complete:
    /// the write lane never waits for the digest lane (it did with `digestQueue.sync`).
    @Test func aBusyDigestLaneNeverHoldsTheWriteLane() async throws {
        let root = try Fixture.tempDirectory("ferry-lane-test")
        defer { Fixture.removeTree(root) }
        let content = Fixture.content(size: 3 << 20, seed: 41)
        try Data(content[..<(1 << 20)]).write(to: URL(fileURLWithPath: root + "/a"))
        let lanes = DiskLanes.Pair.alone("test.shared")
        let callbacks = DispatchQueue(label: "test.lane.callbacks")
        let resuming = FileWriter(path: root + "/a", label: "a", callbackQueue: callbacks, digestFirst: true, lanes: lanes)
        let other = FileWriter(path: root + "/b", label: "b", callbackQueue: callbacks, digestFirst: false, lanes: lanes)
        #expect(await Self.open(other, keep: false) == 0)
        // The digest lane held (suspended: its work waits, no thread is blocked), as a long hash would hold it.
        let digestLane = lanes.digests.lane()
        digestLane.suspend()
        let opened = Mutex<Int64?>(nil)
        resuming.open(keepExisting: true) { result in opened.withLock { $0 = try? result.get() } }
        let wrote = Mutex(false)
        other.write(Array(content[..<4096]), at: 0) { error in wrote.withLock { $0 = error == nil } }
        #expect(await pollUntil(timeout: 5, interval: 0.01) { wrote.withLock { $0 } ? true : nil } == true,
                "the other writer's write completed while the digest lane was held")
        #expect(opened.withLock { $0 } == nil, "the resumed file's open waits for its digest")
        digestLane.resume()
        #expect(await pollUntil(timeout: 10, interval: 0.01) { opened.withLock { $0 } } == 1 << 20)
        let written = await withCheckedContinuation { continuation in
            resuming.write(Array(content[(1 << 20)...]), at: 1 << 20) { continuation.resume(returning: $0) }
        }
        #expect(written == nil)
        let finished = await withCheckedContinuation { continuation in resuming.finish { continuation.resume(returning: $0) } }
        #expect((try? finished.get().digests.sha256) == Fixture.sha256Hex(of: content))
    }

    private static func open(_ writer: FileWriter, keep: Bool) async -> Int64? {
        await withCheckedContinuation { continuation in
            writer.open(keepExisting: keep) { continuation.resume(returning: try? $0.get()) }
        }
    }
}
