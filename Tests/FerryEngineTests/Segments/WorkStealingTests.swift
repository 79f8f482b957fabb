@testable import FerryEngine
import Testing

struct WorkStealingTests {
    typealias Candidate = WorkStealing.Candidate
    static let mib: Int64 = 1 << 20

    @Test func takesTheBackHalfOfTheSegmentThatWillFinishLast() {
        let candidates = [
            Candidate(start: 0, position: 2 * Self.mib, end: 8 * Self.mib, bytesPerSecond: 3e6),  // 2 s left
            Candidate(start: 8 * Self.mib, position: 9 * Self.mib, end: 16 * Self.mib, bytesPerSecond: 1e6),  // 7 s left
            Candidate(start: 16 * Self.mib, position: 20 * Self.mib, end: 24 * Self.mib, bytesPerSecond: 2e6),  // 2 s left
        ]
        let steal = WorkStealing.steal(from: candidates, minimumPiece: Self.mib)
        // The victim keeps [9, 12.5) MiB and the thief takes [12.5, 16) MiB.
        #expect(steal == WorkStealing.Steal(victim: 8 * Self.mib, at: 9 * Self.mib + 7 * Self.mib / 2))
    }

    @Test func aSegmentNotMovingIsTheSlowest() {
        let candidates = [
            Candidate(start: 0, position: 0, end: 100 * Self.mib, bytesPerSecond: 1e6),
            Candidate(start: 100 * Self.mib, position: 110 * Self.mib, end: 113 * Self.mib, bytesPerSecond: 0),
        ]
        #expect(WorkStealing.steal(from: candidates, minimumPiece: Self.mib)?.victim == 100 * Self.mib)
    }

    @Test func tiesGoToTheLargerRemainderThenTheLowerOffset() {
        let a = Candidate(start: 0, position: 0, end: 4 * Self.mib, bytesPerSecond: 0)
        let b = Candidate(start: 4 * Self.mib, position: 4 * Self.mib, end: 12 * Self.mib, bytesPerSecond: 0)
        #expect(WorkStealing.steal(from: [a, b], minimumPiece: Self.mib)?.victim == b.start)
        let c = Candidate(start: 12 * Self.mib, position: 12 * Self.mib, end: 16 * Self.mib, bytesPerSecond: 0)
        #expect(WorkStealing.steal(from: [c, a], minimumPiece: Self.mib)?.victim == a.start)
    }

    @Test func bothHalvesKeepTheMinimum() {
        let small = Candidate(start: 0, position: 0, end: 2 * Self.mib - 1, bytesPerSecond: 0)
        #expect(WorkStealing.steal(from: [small], minimumPiece: Self.mib) == nil)
        let enough = Candidate(start: 0, position: 0, end: 2 * Self.mib, bytesPerSecond: 0)
        #expect(WorkStealing.steal(from: [small, enough], minimumPiece: Self.mib) == WorkStealing.Steal(victim: 0, at: Self.mib))
        // An odd remainder: the victim keeps the extra byte.
        let odd = Candidate(start: 0, position: 10, end: 10 + 2 * Self.mib + 1, bytesPerSecond: 5)
        #expect(WorkStealing.steal(from: [odd], minimumPiece: Self.mib) == WorkStealing.Steal(victim: 0, at: 10 + Self.mib + 1))
        #expect(WorkStealing.steal(from: [], minimumPiece: Self.mib) == nil)
    }

    @Test func aSegmentAboutToFinishOrNotMeasuredIsLeftAlone() {
        // 4 MiB left at 8 MiB/s: done in half a second, and its bytes are probably in flight already.
        let fast = Candidate(start: 0, position: 0, end: 4 * Self.mib, bytesPerSecond: Double(8 * Self.mib))
        #expect(WorkStealing.steal(from: [fast], minimumPiece: Self.mib) == nil)
        #expect(WorkStealing.steal(from: [fast], minimumPiece: Self.mib, minimumSecondsLeft: 0.25)?.victim == 0)
        let fresh = Candidate(start: 4 * Self.mib, position: 4 * Self.mib, end: 64 * Self.mib, bytesPerSecond: nil)
        #expect(fresh.secondsLeft == nil)
        #expect(WorkStealing.steal(from: [fast, fresh], minimumPiece: Self.mib) == nil)
        let slow = Candidate(start: 64 * Self.mib, position: 64 * Self.mib, end: 68 * Self.mib, bytesPerSecond: Double(Self.mib))
        #expect(WorkStealing.steal(from: [fast, fresh, slow], minimumPiece: Self.mib)?.victim == 64 * Self.mib)
    }
}
