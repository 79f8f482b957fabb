import Foundation
import Testing
@testable import FerryService

@Suite struct SubscriberQueueTests {
    typealias F = EventFixture

    private func ids(_ events: [ServerEvent]) -> [Int64] { events.map(\.id) }

    @Test func jobEventsGoOutAtOnceInOrder() {
        var queue = SubscriberQueue(after: 0)
        #expect(queue.nextDueTime == nil)
        queue.offer(F.job(1, "a"), now: 10)
        queue.offer(F.removed(2, "b"), now: 10)
        #expect(queue.nextDueTime == 10)
        let r1 = queue.take(now: 10, writable: true)
        #expect(ids(r1) == [1, 2])
        #expect(queue.lastDeliveredID == 2)
        #expect(queue.nextDueTime == nil)
        let r2 = queue.take(now: 11, writable: true)
        #expect(r2.isEmpty)
    }

    @Test func nothingIsTakenWhileNotWritable() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.job(1, "a"), now: 0)
        queue.offer(F.progress(2, "b"), now: 0)
        let r3 = queue.take(now: 5, writable: false)
        #expect(r3.isEmpty)
        #expect(queue.pendingEventCount == 1)
        #expect(queue.pendingProgressCount == 1)
        let r4 = queue.take(now: 5, writable: true)
        #expect(ids(r4) == [1, 2])
    }

    @Test func offersAtOrBelowTheStartOrAnEarlierOfferAreIgnored() {
        var queue = SubscriberQueue(after: 5)
        let r5 = queue.offer(F.job(5, "a"), now: 0)
        #expect(!r5)
        let r6 = queue.offer(F.job(3, "a"), now: 0)
        #expect(!r6)
        let r7 = queue.offer(F.job(6, "a"), now: 0)
        #expect(r7)
        let r8 = queue.offer(F.job(6, "a"), now: 0)
        #expect(!r8)      // a live event the replay already carried
        let r9 = queue.offer(F.job(8, "a"), now: 0)
        #expect(r9)
        let r10 = queue.offer(F.progress(7, "a"), now: 0)
        #expect(!r10)
        let r11 = queue.take(now: 0, writable: true)
        #expect(ids(r11) == [6, 8])
        let r12 = queue.offer(F.job(8, "a"), now: 1)
        #expect(!r12)
        let r13 = queue.take(now: 1, writable: true)
        #expect(r13.isEmpty)
    }

    @Test func progressIsCoalescedToTheLatest() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.progress(1, "a", bytes: 10), now: 0)
        queue.offer(F.progress(2, "a", bytes: 20), now: 0)
        queue.offer(F.progress(3, "b", bytes: 5), now: 0)
        queue.offer(F.progress(4, "a", bytes: 30), now: 0)
        #expect(queue.pendingProgressCount == 2)
        #expect(queue.pendingBytes == F.progress(3, "b", bytes: 5).frame.count + F.progress(4, "a", bytes: 30).frame.count)
        let out = queue.take(now: 0, writable: true)
        #expect(ids(out) == [3, 4])
        #expect(out.last == F.progress(4, "a", bytes: 30))
        #expect(queue.pendingBytes == 0)
    }

    /// A shared queue's progress falls due on a grid of the interval: jobs sent at different moments
    /// line up, and no job gets two progress events less than an interval apart.
    /// A batch sent a few milliseconds after its grid instant (a timer firing late) does not push the job's next
    /// progress two grid steps away: at 100 ms, a steady job gets one progress per step.
    @Test func gridToleratesALateTimer() {
        var queue = SubscriberQueue(after: 0, intervalMilliseconds: 100, alignedToGrid: true)
        var sentAt: [Double] = []
        var id: Int64 = 0
        for step in 1...20 {
            let instant = Double(step) / 10
            id += 1
            queue.offer(EventFixture.progress(id, "a"), now: instant - 0.03)
            if !queue.take(now: instant + 0.004, writable: true).isEmpty { sentAt.append(instant + 0.004) }
        }
        #expect(sentAt.count == 20)
        let gaps = zip(sentAt.dropFirst(), sentAt).map { $0 - $1 }
        #expect(gaps.allSatisfy { $0 >= 0.1 - SubscriberQueue.gridSlack(0.1) - 1e-9 })
    }

    @Test func gridAlignsProgressOfDifferentJobsAndKeepsTheInterval() {
        var queue = SubscriberQueue(after: 0, intervalMilliseconds: 500, alignedToGrid: true)
        #expect(queue.grid == 0.5)
        queue.offer(F.progress(1, "a"), now: 10.0)
        #expect(ids(queue.take(now: 10.0, writable: true)) == [1])
        queue.offer(F.progress(2, "b"), now: 10.1)
        #expect(ids(queue.take(now: 10.1, writable: true)) == [2])
        queue.offer(F.progress(3, "a"), now: 10.2)
        queue.offer(F.progress(4, "b"), now: 10.3)
        // a is due at 10.5 (on the grid), b at 10.6 rounded up to 11.0.
        #expect(queue.nextDueTime == 10.5)
        #expect(ids(queue.take(now: 10.5, writable: true)) == [3])
        #expect(queue.take(now: 10.99, writable: true).isEmpty)
        #expect(ids(queue.take(now: 11.0, writable: true)) == [4])
        // a due at 11.0, b at 11.5; b's older progress holds a's back to 11.5 (ids stay in order), and
        // from then on the two share their grid instants.
        queue.offer(F.progress(5, "b"), now: 11.1)
        queue.offer(F.progress(6, "a"), now: 11.2)
        #expect(queue.take(now: 11.2, writable: true).isEmpty)
        #expect(ids(queue.take(now: 11.5, writable: true)) == [5, 6])
        queue.offer(F.progress(7, "a"), now: 11.6)
        queue.offer(F.progress(8, "b"), now: 11.7)
        #expect(queue.nextDueTime == 12.0)
        #expect(queue.take(now: 11.99, writable: true).isEmpty)
        #expect(ids(queue.take(now: 12.0, writable: true)) == [7, 8])
    }

    /// A stream may move from its own queue to a shared one only when the shared one sent every recent
    /// progress no earlier than its own queue did.
    @Test func handOverKeepsTheIntervalPerJob() {
        var own = SubscriberQueue(after: 0, intervalMilliseconds: 500, alignedToGrid: true)
        var shared = SubscriberQueue(after: 0, intervalMilliseconds: 500, alignedToGrid: true)
        for event in [F.progress(1, "a"), F.progress(2, "b")] {
            own.offer(event, now: 10.0)
            shared.offer(event, now: 10.0)
        }
        _ = own.take(now: 10.0, writable: true)
        _ = shared.take(now: 10.0, writable: true)
        #expect(own.mayHandOver(to: shared, now: 10.1))
        own.offer(F.progress(3, "a"), now: 10.6)
        _ = own.take(now: 10.6, writable: true)      // the shared queue has not sent a's newer progress
        #expect(!own.mayHandOver(to: shared, now: 10.7))
        #expect(own.mayHandOver(to: shared, now: 11.1))   // an interval later it no longer matters
    }

    @Test func intervalIsHonouredPerJob() {
        var queue = SubscriberQueue(after: 0, intervalMilliseconds: 500)
        queue.offer(F.progress(1, "a"), now: 0)
        let r14 = queue.take(now: 0, writable: true)
        #expect(ids(r14) == [1])
        queue.offer(F.progress(2, "b"), now: 0.1)
        let r15 = queue.take(now: 0.1, writable: true)
        #expect(ids(r15) == [2])       // b has its own clock
        queue.offer(F.progress(3, "a"), now: 0.2)
        #expect(queue.nextDueTime == 0.5)
        let r16 = queue.take(now: 0.2, writable: true)
        #expect(r16.isEmpty)
        let r17 = queue.take(now: 0.499, writable: true)
        #expect(r17.isEmpty)
        queue.offer(F.progress(4, "a"), now: 0.3)
        let r18 = queue.take(now: 0.5, writable: true)
        #expect(ids(r18) == [4])
        queue.offer(F.progress(5, "b"), now: 0.55)
        #expect(queue.nextDueTime == 0.6)
        let r19 = queue.take(now: 0.59, writable: true)
        #expect(r19.isEmpty)
        let r20 = queue.take(now: 0.6, writable: true)
        #expect(ids(r20) == [5])
        // After a quiet period the next progress is due at once.
        queue.offer(F.progress(6, "a"), now: 3)
        #expect(queue.nextDueTime == 3)
        let r21 = queue.take(now: 3, writable: true)
        #expect(ids(r21) == [6])
    }

    @Test func intervalHasAFloorOf100ms() {
        #expect(SubscriberQueue(after: 0).interval == 0.5)
        #expect(SubscriberQueue(after: 0, intervalMilliseconds: 20).interval == 0.1)
        #expect(SubscriberQueue(after: 0, intervalMilliseconds: -5).interval == 0.1)
        #expect(SubscriberQueue(after: 0, intervalMilliseconds: 2_000).interval == 2)
        var queue = SubscriberQueue(after: 0, intervalMilliseconds: 1)
        queue.offer(F.progress(1, "a"), now: 0)
        _ = queue.take(now: 0, writable: true)
        queue.offer(F.progress(2, "a"), now: 0.05)
        let r22 = queue.take(now: 0.05, writable: true)
        #expect(r22.isEmpty)
        let r23 = queue.take(now: 0.1, writable: true)
        #expect(ids(r23) == [2])
    }

    @Test func jobEventSupersedesPendingProgressOfTheSameJob() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.progress(1, "a"), now: 0)
        queue.offer(F.progress(2, "b"), now: 0)
        queue.offer(F.job(3, "a", "finished"), now: 0)
        #expect(queue.pendingProgressCount == 1)
        let r24 = queue.take(now: 0, writable: true)
        #expect(ids(r24) == [2, 3])
        #expect(queue.dirtyJobIDs.isEmpty)
        // removed too
        queue.offer(F.progress(4, "b"), now: 10)
        queue.offer(F.removed(5, "b"), now: 10)
        let r25 = queue.take(now: 10, writable: true)
        #expect(ids(r25) == [5])
    }

    @Test func undueProgressOvertakenByAJobEventIsDroppedAndTheJobMarkedDirty() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.progress(1, "a"), now: 0)
        let r26 = queue.take(now: 0, writable: true)
        #expect(ids(r26) == [1])
        queue.offer(F.progress(2, "a"), now: 0.1)           // not due before 0.5
        queue.offer(F.progress(3, "c"), now: 0.1)           // due (c never sent)
        queue.offer(F.job(4, "b"), now: 0.1)
        let r27 = queue.take(now: 0.1, writable: true)
        #expect(ids(r27) == [3, 4])
        #expect(queue.dirtyJobIDs == ["a"])
        #expect(!queue.hasPending)
        #expect(queue.lastDeliveredID == 4)
        // a's next progress goes out as soon as it is due: lastSent did not move.
        queue.offer(F.progress(5, "a"), now: 0.2)
        #expect(queue.nextDueTime == 0.5)
        let r28 = queue.take(now: 0.5, writable: true)
        #expect(ids(r28) == [5])
        #expect(queue.dirtyJobIDs.isEmpty)
    }

    @Test func aJobStaysDirtyWhenItsOlderJobEventGoesOutWithTheDrop() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.progress(1, "a"), now: 0)
        _ = queue.take(now: 0, writable: true)
        queue.offer(F.job(2, "a"), now: 0.1)
        queue.offer(F.progress(3, "a"), now: 0.1)       // newer than job 2, not due before 0.5
        queue.offer(F.job(4, "b"), now: 0.1)
        let out = queue.take(now: 0.1, writable: true)
        #expect(out.map(\.id) == [2, 4])
        #expect(queue.dirtyJobIDs == ["a"])
    }

    @Test func dueProgressWaitsBehindAnUndueSmallerOneInsteadOfDroppingIt() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.progress(1, "a"), now: 0)
        _ = queue.take(now: 0, writable: true)
        queue.offer(F.progress(2, "a"), now: 0.2)       // due at 0.5
        queue.offer(F.progress(3, "b"), now: 0.2)       // due now, but must not overtake 2
        #expect(queue.nextDueTime == 0.5)
        let r29 = queue.take(now: 0.2, writable: true)
        #expect(r29.isEmpty)
        let r30 = queue.take(now: 0.5, writable: true)
        #expect(ids(r30) == [2, 3])
        #expect(queue.dirtyJobIDs.isEmpty)
    }

    @Test func dirtyIsClearedByAJobEventOfThatJob() {
        var queue = SubscriberQueue(after: 0)
        queue.offer(F.progress(1, "a"), now: 0)
        _ = queue.take(now: 0, writable: true)
        queue.offer(F.progress(2, "a"), now: 0.1)
        queue.offer(F.job(3, "b"), now: 0.1)
        _ = queue.take(now: 0.1, writable: true)
        #expect(queue.dirtyJobIDs == ["a"])
        queue.offer(F.job(4, "a"), now: 0.2)
        let r31 = queue.take(now: 0.2, writable: true)
        #expect(ids(r31) == [4])
        #expect(queue.dirtyJobIDs.isEmpty)
    }

    @Test func filterByJobIds() {
        var queue = SubscriberQueue(after: 0, filter: .jobs(["a", "c"]))
        let r32 = queue.offer(F.job(1, "a"), now: 0)
        #expect(r32)
        let r33 = queue.offer(F.job(2, "b"), now: 0)
        #expect(!r33)
        let r34 = queue.offer(F.progress(3, "b"), now: 0)
        #expect(!r34)
        let r35 = queue.offer(F.progress(4, "c"), now: 0)
        #expect(r35)
        let r36 = queue.offer(F.removed(5, "b"), now: 0)
        #expect(!r36)
        let r37 = queue.offer(F.removed(6, "a"), now: 0)
        #expect(r37)
        let r38 = queue.take(now: 0, writable: true)
        #expect(ids(r38) == [1, 4, 6])
        // A filtered-out id still counts as offered: an older event can no longer sneak in.
        let r39 = queue.offer(F.job(5, "a"), now: 0)
        #expect(!r39)
    }

    @Test func slowSubscriberBecomesTooFarBehindByCount() {
        var queue = SubscriberQueue(after: 0, limits: .init(maxPendingEvents: 100, maxPendingBytes: .max))
        for id in Int64(1)...100 { queue.offer(F.job(id, "j\(id % 3)"), now: 0) }
        #expect(!queue.isTooFarBehind)
        // Progress is coalesced, so it never makes a subscriber too far behind by count.
        for id in Int64(101)...1_000 { queue.offer(F.progress(id, "p"), now: 0) }
        #expect(!queue.isTooFarBehind)
        queue.offer(F.job(1_001, "j"), now: 0)
        #expect(queue.isTooFarBehind)
        let r40 = queue.take(now: 0, writable: false)
        #expect(r40.isEmpty)
        #expect(queue.isTooFarBehind)
        let r41 = queue.take(now: 0, writable: true)
        #expect(r41.count == 102)   // 101 job events and p's latest progress
        #expect(!queue.isTooFarBehind)
    }

    @Test func slowSubscriberBecomesTooFarBehindByBytes() {
        let frame = F.job(1, "a").frame.count
        var queue = SubscriberQueue(after: 0, limits: .init(maxPendingEvents: .max, maxPendingBytes: frame * 3))
        for id in Int64(1)...3 { queue.offer(F.job(id, "a"), now: 0) }
        #expect(queue.pendingBytes == frame * 3)
        #expect(!queue.isTooFarBehind)
        queue.offer(F.progress(4, "b"), now: 0)
        #expect(queue.isTooFarBehind)
    }

    @Test func defaultLimits() {
        let limits = SubscriberQueue.Limits()
        #expect(limits.maxPendingEvents == 10_000)
        #expect(limits.maxPendingBytes == 8 * 1024 * 1024)
    }

    @Test func manyJobsStillHonourTheIntervalAfterSendTimesArePruned() {
        var queue = SubscriberQueue(after: 0, intervalMilliseconds: 100)
        var id: Int64 = 0
        func offerAll(at now: Double) {
            for job in 0..<2_000 {
                id += 1
                queue.offer(F.progress(id, "j\(job)"), now: now)
            }
        }
        for round in 0..<3 {
            let start = Double(round)
            offerAll(at: start)
            let first = queue.take(now: start, writable: true)
            #expect(first.count == 2_000)
            offerAll(at: start + 0.05)
            let early = queue.take(now: start + 0.05, writable: true)
            #expect(early.isEmpty)
            let due = queue.take(now: start + 0.1, writable: true)
            #expect(due.count == 2_000)
        }
    }
}
