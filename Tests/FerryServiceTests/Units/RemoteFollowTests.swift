import FerryEngine
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

@Suite("Following a job another node runs: its stored parts")
struct RemoteFollowPartsTests {
    private func record(parts: [Int], size: Int64 = 25, partSize: Int64 = 10, etag: String? = "\"v1\"") -> ObjectUploadRecord {
        ObjectUploadRecord(key: "p/j/f.bin", uploadID: "u", partSize: partSize, etag: etag, lastModified: nil, size: size,
                           parts: parts.map { .init(number: $0, etag: "e\($0)", size: $0 == 3 ? 5 : 10) })
    }

    @Test func thePartHoldingTheNextByteWhenStored() {
        #expect(RemoteFollow.nextPart(record(parts: [1, 2]), sent: 0)! == (1, 0, 10))
        #expect(RemoteFollow.nextPart(record(parts: [1, 2]), sent: 10)! == (2, 0, 10))
        // A copy read part-way before it failed: the rest of that part.
        #expect(RemoteFollow.nextPart(record(parts: [1, 2]), sent: 14)! == (2, 4, 6))
        #expect(RemoteFollow.nextPart(record(parts: [1, 3]), sent: 20)! == (3, 0, 5))
        // Not stored yet (a gap), or the end of the file.
        #expect(RemoteFollow.nextPart(record(parts: [1, 3]), sent: 10) == nil)
        #expect(RemoteFollow.nextPart(record(parts: [1, 2, 3]), sent: 25) == nil)
        #expect(RemoteFollow.nextPart(record(parts: [1], partSize: 0), sent: 0) == nil)
    }

    @Test func partsOfAnotherVersionDoNotFollowTheBytesSent() {
        #expect(RemoteFollow.sameFile(record(parts: [1, 2]), as: record(parts: [1])))
        #expect(!RemoteFollow.sameFile(record(parts: [1], etag: "\"v2\""), as: record(parts: [1])))
        #expect(!RemoteFollow.sameFile(record(parts: [1], size: 30), as: record(parts: [1])))
    }
}

@Suite("Following a job another node runs: where its part copies are")
struct RemoteFollowKeysTests {
    @Test func aPartCopyIsKeptBesideTheJobsFileUnderANameNoFileHas() throws {
        let location = try ObjectStoreLocation(parsing: "s3://bucket/jobs?endpoint=http://127.0.0.1:9000&region=us-east-1")
        #expect(location.livePartKey(jobID: "j", number: 3) == "jobs/j/.live-part-3")
        #expect(location.livePartKey(jobID: "j", number: 3).hasPrefix(location.keyPrefix(jobID: "j")))
        #expect(location.key(jobID: "j", filename: "f.bin") == "jobs/j/f.bin")
    }
}
