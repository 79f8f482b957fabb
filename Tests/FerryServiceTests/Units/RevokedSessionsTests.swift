import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("Revoked sessions")
struct RevokedSessionsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func remembersEachLogoutOnce() {
        var revoked = RevokedSessions(now: now)
        #expect(!revoked.contains("aa"))
        #expect(revoked.insert("aa", expiresAt: now.addingTimeInterval(60), now: now) == .added(prunedExpired: false))
        #expect(revoked.contains("aa"))
        #expect(revoked.insert("aa", expiresAt: now.addingTimeInterval(60), now: now) == .alreadyRevoked)
        #expect(revoked.count == 1)
    }

    @Test func anExpiredCookieNeedsNoRevocation() {
        var revoked = RevokedSessions(now: now)
        #expect(revoked.insert("aa", expiresAt: now, now: now) == .expired)
        #expect(!revoked.contains("aa"))
    }

    @Test func loadingDropsExpiredRevocationsButNeverForgetsLiveOnes() {
        let revocations = [RevokedSession(nonce: "old", expiresAt: now),
                           RevokedSession(nonce: "a", expiresAt: now.addingTimeInterval(1)),
                           RevokedSession(nonce: "b", expiresAt: now.addingTimeInterval(2)),
                           RevokedSession(nonce: "c", expiresAt: now.addingTimeInterval(3))]
        let revoked = RevokedSessions(capacity: 2, revocations: revocations, now: now)
        #expect(!revoked.contains("old"))
        #expect(revoked.contains("a") && revoked.contains("b") && revoked.contains("c"), "kept beyond the capacity")
    }

    @Test func whenFullExpiredEntriesMakeRoom() {
        var revoked = RevokedSessions(capacity: 2, now: now)
        #expect(revoked.insert("a", expiresAt: now.addingTimeInterval(10), now: now) == .added(prunedExpired: false))
        #expect(revoked.insert("b", expiresAt: now.addingTimeInterval(100), now: now) == .added(prunedExpired: false))
        let later = now.addingTimeInterval(20)  // "a" has expired by then
        #expect(revoked.insert("c", expiresAt: later.addingTimeInterval(100), now: later) == .added(prunedExpired: true))
        #expect(!revoked.contains("a") && revoked.contains("b") && revoked.contains("c"))
        #expect(revoked.count == 2)
    }

    @Test func whenFullOfLiveLogoutsNothingIsForgottenAndTheCallerHears() {
        var revoked = RevokedSessions(capacity: 2, now: now)
        _ = revoked.insert("a", expiresAt: now.addingTimeInterval(10), now: now)
        _ = revoked.insert("b", expiresAt: now.addingTimeInterval(10), now: now)
        #expect(revoked.insert("c", expiresAt: now.addingTimeInterval(10), now: now) == .full)
        #expect(revoked.contains("a") && revoked.contains("b") && !revoked.contains("c"))
        #expect(revoked.insert("a", expiresAt: now.addingTimeInterval(10), now: now) == .alreadyRevoked)
    }
}
