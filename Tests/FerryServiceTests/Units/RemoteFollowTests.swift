import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("Following a job another node runs")
struct RemoteFollowTests {
    @Test func onlyANodeOfAClusterNotRunningTheJobFollowsItRemotely() {
        #expect(RemoteFollow.isElsewhere(runningNode: "b", localNode: "a", hasObjectStore: true))
        // Not claimed yet: it may run anywhere, so only its finished object is sure to be readable here.
        #expect(RemoteFollow.isElsewhere(runningNode: nil, localNode: "a", hasObjectStore: true))
        #expect(!RemoteFollow.isElsewhere(runningNode: "a", localNode: "a", hasObjectStore: true))
        // One node (no node id), or no object store: the partial file is here.
        #expect(!RemoteFollow.isElsewhere(runningNode: nil, localNode: nil, hasObjectStore: true))
        #expect(!RemoteFollow.isElsewhere(runningNode: "b", localNode: "a", hasObjectStore: false))
    }

    @Test func waitsWhileTheJobRunsReadsItsObjectOnceFinishedAbortsOtherwise() {
        func job(_ state: JobState, filename: String? = "f.bin") -> JobRecord {
            JobRecord(id: "j", url: "http://o.test/f.bin", state: state, filename: filename, dedupeKey: "k", createdAt: Date())
        }
        #expect(RemoteFollow.step(job(.waiting)) == .wait)
        #expect(RemoteFollow.step(job(.downloading)) == .wait)
        #expect(RemoteFollow.step(job(.paused)) == .wait)
        #expect(RemoteFollow.step(job(.finished)) == .read(filename: "f.bin"))
        #expect(RemoteFollow.step(job(.delivering)) == .read(filename: "f.bin"))
        #expect(RemoteFollow.step(job(.finished, filename: nil)) == .abort)
        #expect(RemoteFollow.step(job(.failed)) == .abort)
        #expect(RemoteFollow.step(job(.cancelled)) == .abort)
        #expect(RemoteFollow.step(nil) == .abort)
    }
}
