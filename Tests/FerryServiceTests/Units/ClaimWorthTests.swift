import Foundation
import Testing
import FerryStore
@testable import FerryService

/// Which commits of other nodes are worth a claim: only those that may have left a job without a node.
@Suite struct ClaimWorthTests {
    private func row(_ state: JobState, owner: String?, key: String? = nil) -> (job: JobRecord, liveOwner: String?) {
        var job = JobRecord(id: "j", url: "https://o.example/j", state: state, dedupeKey: "j", createdAt: Date())
        job.ownerKey = key
        return (job, owner)
    }

    @Test func aJobThatWantsRunningWithNoNodeIsWorthAClaim() {
        for state in [JobState.waiting, .downloading, .delivering] {
            #expect(ClaimWorth.after([row(.finished, owner: nil), row(state, owner: nil)], goneKeys: []), "\(state)")
        }
    }

    @Test func aJobRunningOnANodeOrStoppedFreesNothing() {
        for state in JobState.allCases {
            #expect(!ClaimWorth.after([row(state, owner: "node-1")], goneKeys: [nil]), "\(state) held by a node")
        }
        for state in [JobState.paused, .finished, .failed, .cancelled] {
            #expect(!ClaimWorth.after([row(state, owner: nil)], goneKeys: [nil]), "\(state) without a key")
        }
        #expect(!ClaimWorth.after([], goneKeys: []))
    }

    @Test func aKeysJobThatStoppedOrWentAwayMayFreeASlotUnderItsCap() {
        #expect(ClaimWorth.after([row(.finished, owner: nil, key: "k1")], goneKeys: []))
        #expect(ClaimWorth.after([row(.cancelled, owner: "node-1", key: "k1")], goneKeys: []))
        #expect(ClaimWorth.after([], goneKeys: [nil, "k1"]))
        #expect(!ClaimWorth.after([row(.downloading, owner: "node-1", key: "k1")], goneKeys: [nil]))
    }
}
