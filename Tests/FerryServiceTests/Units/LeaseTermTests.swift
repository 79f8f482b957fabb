import Testing
@testable import FerryService

/// `LeaseTerm` on a fake clock: the fence falls two thirds of a lease after the last renewal was sent, only a
/// renewal lifts it, and a late answer to an older renewal never moves the term back.
@Suite("LeaseTerm")
struct LeaseTermTests {
    let start = ContinuousClock.now

    @Test func holdsNothingBeforeTheFirstRenewal() {
        let term = LeaseTerm(lease: .seconds(15))
        #expect(!term.holds(at: start))
        #expect(term.fenceAt == nil)
        #expect(term.decision(at: start, fenced: false) == .fence)
        #expect(term.decision(at: start, fenced: true) == .keep)
    }

    @Test func fencesTwoThirdsOfALeaseAfterTheRenewalWasSent() {
        var term = LeaseTerm(lease: .seconds(15))
        term.renewed(sentAt: start)
        #expect(term.fenceAfter == .seconds(10))
        #expect(term.holds(at: start))
        #expect(term.holds(at: start + .milliseconds(9_999)))
        #expect(!term.holds(at: start + .seconds(10)))
        #expect(term.decision(at: start + .seconds(9), fenced: false) == .keep)
        #expect(term.decision(at: start + .seconds(10), fenced: false) == .fence)
        // Fenced, it stays fenced however long it waits.
        #expect(term.decision(at: start + .seconds(60), fenced: true) == .keep)
    }

    @Test func onlyARenewalLiftsTheFence() {
        var term = LeaseTerm(lease: .seconds(6))
        term.renewed(sentAt: start)
        #expect(term.decision(at: start + .seconds(5), fenced: false) == .fence)
        term.renewed(sentAt: start + .seconds(5))
        #expect(term.decision(at: start + .seconds(5) + .milliseconds(100), fenced: true) == .lift)
        #expect(term.decision(at: start + .seconds(5) + .milliseconds(100), fenced: false) == .keep)
    }

    @Test func aLateAnswerToAnOlderRenewalDoesNotMoveTheTermBack() {
        var term = LeaseTerm(lease: .seconds(3))
        term.renewed(sentAt: start + .seconds(2))
        term.renewed(sentAt: start + .seconds(1))
        #expect(term.renewedAt == start + .seconds(2))
        #expect(term.holds(at: start + .seconds(3) + .milliseconds(999)))
        #expect(!term.holds(at: start + .seconds(4)))
    }

    @Test func aProcessStoppedPastItsTermFindsItOverAtOnce() {
        // SIGSTOP at 1 s, SIGCONT at 20 s: the monotonic clock ran on, so the first look after it says fence.
        var term = LeaseTerm(lease: .seconds(5))
        term.renewed(sentAt: start)
        #expect(term.holds(at: start + .seconds(1)))
        #expect(term.decision(at: start + .seconds(20), fenced: false) == .fence)
    }
}
