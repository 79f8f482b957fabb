@testable import FerryClient
import Testing

@Suite("Job board")
struct JobBoardTests {
    static func job(_ id: String, _ state: JobState, received: Int64 = 0, expected: Int64? = 100) -> Job {
        Job(id: id, url: "http://o/\(id)", state: state, filename: id, bytesReceived: received, bytesExpected: expected)
    }

    @Test func aTrackingBoardFollowsOnlyItsJobsToTheEnd() {
        var board = JobBoard(tracking: ["a", "b"])
        board.load([Self.job("a", .downloading), Self.job("b", .waiting)])
        #expect(!board.allEnded)
        #expect(board.apply(.job(Self.job("c", .finished), restarted: false)) == .none)
        #expect(board.apply(.progress(ProgressUpdate(id: "a", bytesReceived: 50, bytesExpected: 100, progress: 0.5, speed: 10, eta: 5))) == .progress("a"))
        #expect(board["a"]?.bytesReceived == 50)
        #expect(board["a"]?.speed == 10)
        #expect(board.apply(.job(Self.job("a", .finished, received: 100), restarted: false)) == .state("a"))
        #expect(!board.allEnded)
        #expect(board.apply(.job(Self.job("b", .failed), restarted: false)) == .state("b"))
        #expect(board.allEnded)
        #expect(!board.allFinished)
        #expect(board.jobs.map(\.id) == ["a", "b"])
    }

    @Test func progressAfterTheEndChangesNothing() {
        var board = JobBoard()
        board.load([Self.job("a", .finished, received: 100)])
        #expect(board.apply(.progress(ProgressUpdate(id: "a", bytesReceived: 20))) == .none)
        #expect(board["a"]?.bytesReceived == 100)
    }

    @Test func aRemovedJobEndsTheWaitButNotSuccessfully() {
        var board = JobBoard(tracking: ["a"])
        board.load([Self.job("a", .downloading)])
        #expect(board.apply(.removed(id: "a")) == .removed("a"))
        #expect(board.allEnded)
        #expect(!board.allFinished)
        #expect(board.removedIDs == ["a"])
    }

    @Test func anUnchangedJobEventIsNoChangeAndARestartIsAStateChange() {
        var board = JobBoard()
        let job = Self.job("a", .downloading, received: 10)
        #expect(board.apply(.job(job, restarted: false)) == .state("a"))
        #expect(board.apply(.job(job, restarted: false)) == .none)
        #expect(board.apply(.job(job, restarted: true)) == .state("a"))
        var moved = job
        moved.bytesReceived = 20
        #expect(board.apply(.job(moved, restarted: false)) == .progress("a"))
    }

    @Test func aFreshListingReplacesAnUntrackedBoard() {
        var board = JobBoard()
        board.load([Self.job("a", .waiting), Self.job("b", .waiting)])
        _ = board.apply(.job(Self.job("c", .waiting), restarted: false))
        board.load([Self.job("b", .paused), Self.job("d", .waiting)])
        #expect(board.jobs.map(\.id) == ["b", "d"])
        #expect(board["b"]?.state == .paused)
        _ = board.apply(.removed(id: "b"))
        #expect(board.jobs.map(\.id) == ["d"])
        _ = board.apply(.job(Self.job("b", .waiting), restarted: false))
        #expect(board.jobs.map(\.id) == ["d", "b"])
    }

    @Test func resetAndUnknownEventsChangeNothing() {
        var board = JobBoard()
        #expect(board.apply(.reset) == .none)
        #expect(board.apply(.other("x")) == .none)
        #expect(board.apply(.progress(ProgressUpdate(id: "ghost", bytesReceived: 1))) == .none)
    }
}
