import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

/// When a dedupe match answers a request itself, and what a follower does given its leader (pure rules).
@Suite("SharedTransfers")
struct SharedTransfersTests {
    static let url = "http://example.org/a.iso"

    func draft(_ change: (inout JobDraft.Body) -> Void = { _ in }) throws -> JobDraft {
        var body = JobDraft.Body()
        body.url = Self.url
        change(&body)
        return try JobDraft.validate(body, destinations: AddressPolicy())
    }

    func job(_ change: (inout JobRecord) -> Void = { _ in }) -> JobRecord {
        var job = JobRecord(id: "j", url: Self.url, dedupeKey: Self.url, createdAt: Date())
        change(&job)
        return job
    }

    @Test func onlyWhatTheJobAlreadyDoesIsAskedNothingMore() throws {
        let plain = job()
        #expect(!SharedTransfers.asksMore(try draft(), than: plain))
        let settings = try draft {
            $0.priority = 9
            $0.connections = 4
            $0.maxBytesPerSecond = 10
        }
        #expect(!SharedTransfers.asksMore(settings, than: plain))
        #expect(SharedTransfers.asksMore(try draft { $0.deliver = JobDraft.DeliverBody(url: "http://example.org/up") }, than: plain))
        #expect(SharedTransfers.asksMore(try draft { $0.notify = "http://example.org/hook" }, than: plain))
        #expect(SharedTransfers.asksMore(try draft { $0.filename = "b.iso" }, than: plain))
        #expect(SharedTransfers.asksMore(try draft { $0.tags = ["t"] }, than: plain))
        #expect(SharedTransfers.asksMore(try draft { $0.mirrors = ["http://mirror.example/a.iso"] }, than: plain))
        let digest = String(repeating: "c", count: 64)
        #expect(SharedTransfers.asksMore(try draft { $0.sha256 = digest }, than: plain))

        let rich = job { job in
            job.tags = ["t", "u"]
            job.filename = "b (1).iso"
            job.requestedFilename = "b.iso"
            job.sha256 = digest
            job.notify = "http://example.org/hook"
            job.delivery = try? draft { $0.deliver = JobDraft.DeliverBody(url: "http://example.org/up") }.deliver
        }
        let someTagsAndTheName = try draft {
            $0.tags = ["u"]
            $0.filename = "b.iso"
        }
        #expect(!SharedTransfers.asksMore(someTagsAndTheName, than: rich))
        let theActualNameAndDigest = try draft {
            $0.filename = "b (1).iso"
            $0.sha256 = digest
        }
        #expect(!SharedTransfers.asksMore(theActualNameAndDigest, than: rich))
        #expect(!SharedTransfers.asksMore(try draft { $0.notify = "http://example.org/hook" }, than: rich))
        #expect(!SharedTransfers.asksMore(try draft { $0.deliver = JobDraft.DeliverBody(url: "http://example.org/up") }, than: rich))
        #expect(SharedTransfers.asksMore(try draft { $0.deliver = JobDraft.DeliverBody(url: "http://example.org/up", method: "POST") }, than: rich))
        #expect(SharedTransfers.asksMore(try draft { $0.sha256 = String(repeating: "d", count: 64) }, than: rich))
    }

    @Test func aFollowerWaitsSharesOrRunsAlone() {
        typealias S = SharedTransfers
        #expect(S.step(leader: nil, fileExists: false) == .runAlone)
        #expect(S.step(leader: job { $0.state = .waiting }, fileExists: false) == .wait)
        #expect(S.step(leader: job { $0.state = .downloading }, fileExists: false) == .wait)
        for state in [JobState.paused, .failed, .cancelled] {
            #expect(S.step(leader: job { $0.state = state }, fileExists: false) == .runAlone)
        }
        let downloaded = job { $0.state = .finished; $0.sha256 = "aa"; $0.filename = "a.iso" }
        #expect(S.step(leader: downloaded, fileExists: true) == .share)
        #expect(S.step(leader: downloaded, fileExists: false) == .runAlone, "its file was deleted")
        // Downloaded, its delivery pending or failed: the file is there to share.
        #expect(S.step(leader: job { $0.state = .delivering; $0.sha256 = "aa" }, fileExists: true) == .share)
        #expect(S.step(leader: job { $0.state = .failed; $0.sha256 = "aa" }, fileExists: true) == .share)
        #expect(S.step(leader: job { $0.state = .cancelled; $0.sha256 = "aa" }, fileExists: true) == .runAlone)
    }

    @Test func theIndexHandsEachWaitingFollowerBackOnce() {
        var shared = SharedTransfers()
        shared.wait("b", for: "a")
        shared.wait("c", for: "a")
        shared.wait("b", for: "a")
        #expect(shared.takeFollowers(of: "a") == ["b", "c"])
        #expect(shared.takeFollowers(of: "a").isEmpty)
        let first = shared.beginMaking("b"), again = shared.beginMaking("b")
        #expect(first && !again)
        shared.endMaking("b")
        let afterEnd = shared.beginMaking("b")
        #expect(afterEnd)
    }
}
