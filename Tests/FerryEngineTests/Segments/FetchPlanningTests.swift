@testable import FerryEngine
import Testing

/// The pure pieces a fetch is planned with: its request, whether and how the run splits, when its table is saved,
/// an SFTP host key, the ceiling of a file of unknown size.
@Suite("Fetch planning")
struct FetchPlanningTests {
    @Test func aFetchAsksForTheRestOfTheFileOrItsSegment() {
        let spec = ["X-Trace: 1"]
        let fresh = FetchRequest(dialect: .http, position: 0, segmentEnd: 100, splitValidator: nil, resumeValidator: "\"v\"",
                                 headerLines: spec)
        #expect(fresh == FetchRequest(dialect: .http, position: 0, segmentEnd: 100, splitValidator: nil, resumeValidator: nil,
                                      headerLines: spec))
        #expect(fresh.request == .rest(from: 0) && fresh.headerLines == spec && fresh.resumeFrom == nil)
        let resumed = FetchRequest(dialect: .http, position: 40, segmentEnd: 100, splitValidator: nil, resumeValidator: "\"v\"",
                                   headerLines: spec)
        #expect(resumed.request == .rest(from: 40))
        #expect(resumed.headerLines == spec + ["Range: bytes=40-", "If-Range: \"v\""])
        let noValidator = FetchRequest(dialect: .http, position: 40, segmentEnd: 100, splitValidator: nil, resumeValidator: nil,
                                       headerLines: [])
        #expect(noValidator.headerLines == ["Range: bytes=40-"])
        let segment = FetchRequest(dialect: .http, position: 40, segmentEnd: 100, splitValidator: "\"s\"", resumeValidator: "\"v\"",
                                   headerLines: spec)
        #expect(segment.request == .range(40..<100))
        #expect(segment.headerLines == spec + ["Range: bytes=40-99", "If-Range: \"s\""])
        let ftp = FetchRequest(dialect: .byteOffset, position: 40, segmentEnd: 100, splitValidator: "\"s\"", resumeValidator: "\"v\"",
                               headerLines: spec)
        #expect(ftp.request == .rest(from: 40) && ftp.headerLines.isEmpty && ftp.resumeFrom == 40)
        #expect(FetchRequest(dialect: .byteOffset, position: 0, segmentEnd: 100, splitValidator: nil, resumeValidator: nil,
                             headerLines: []).resumeFrom == nil)
    }

    @Test func connectionsWantedFollowTheSpecTheSizeAndTheMirrors() {
        func wanted(_ total: Int64, asked: Int? = nil, sources: Int = 1, segmentable: Bool = true) -> Int {
            SplitPlanner.wantedConnections(total: total, asked: asked, activeSources: sources, segmentable: segmentable,
                                           threshold: 8 << 20, defaultConnections: 4)
        }
        #expect(wanted(8 << 20) == 4)
        #expect(wanted((8 << 20) - 1) == 1)
        #expect(wanted(1, asked: 6) == 6)
        #expect(wanted(1, asked: 40) == 16 && wanted(1 << 30, asked: 0) == 1)
        #expect(wanted(1, sources: 3) == 3 && wanted(8 << 20, sources: 20) == 16)
        #expect(wanted(1 << 30, asked: 8, segmentable: false) == 1)
    }

    @Test func theFirstAnswerSplitsRampsOrStays() {
        let mib: Int64 = 1 << 20
        #expect(SplitPlanner.start(remaining: 100 * mib, wanted: 4, chosen: false, room: 6, minimumSegmentSize: mib) == .adaptive(wanted: 4))
        #expect(SplitPlanner.start(remaining: 100 * mib, wanted: 1, chosen: false, room: 6, minimumSegmentSize: mib) == .none)
        #expect(SplitPlanner.start(remaining: 100 * mib, wanted: 4, chosen: true, room: 6, minimumSegmentSize: mib)
            == .split(count: 4, target: 4))
        // The host's room caps the ranges, not the connections wanted.
        #expect(SplitPlanner.start(remaining: 100 * mib, wanted: 4, chosen: true, room: 2, minimumSegmentSize: mib)
            == .split(count: 2, target: 4))
        #expect(SplitPlanner.start(remaining: 100 * mib, wanted: 4, chosen: true, room: 1, minimumSegmentSize: mib) == .none)
        // Too little left for two ranges of the minimum size.
        #expect(SplitPlanner.start(remaining: mib, wanted: 4, chosen: true, room: 6, minimumSegmentSize: mib) == .none)
    }

    @Test func aSplitKeepsTheFreeSpaceReserveAndPartBoundaries() {
        #expect(SplitPlanner.leavesReserve(free: nil, needed: 100, reserve: 10))
        #expect(SplitPlanner.leavesReserve(free: 110, needed: 100, reserve: 10))
        #expect(!SplitPlanner.leavesReserve(free: 109, needed: 100, reserve: 10))
        #expect(SplitPlanner.alignment(partsStored: false, size: 1 << 30, uploadPartSize: 7, preferredPartSize: 16 << 20) == 1)
        #expect(SplitPlanner.alignment(partsStored: true, size: nil, uploadPartSize: 7, preferredPartSize: 16 << 20) == 1)
        #expect(SplitPlanner.alignment(partsStored: true, size: 1 << 30, uploadPartSize: 7, preferredPartSize: 16 << 20) == 7)
        #expect(SplitPlanner.alignment(partsStored: true, size: 1 << 30, uploadPartSize: nil, preferredPartSize: 16 << 20) == 16 << 20)
    }

    @Test func theTableIsSavedAtMostEveryIntervalWhenItChanged() {
        var saves = SegmentSaves(savedBytes: 100, at: 10)
        func begins(_ bytes: Int64, at now: Double) -> Bool { saves.begin(bytesWritten: bytes, now: now, interval: 1) }
        #expect(!begins(200, at: 10.5))
        #expect(!begins(100, at: 20))
        #expect(begins(200, at: 11))
        // Never two at once.
        #expect(!begins(300, at: 30))
        saves.ended(failed: false)
        #expect(!begins(200, at: 30))
        #expect(begins(300, at: 30))
        // A failed save is made again at the next chance, whatever the count.
        saves.ended(failed: true)
        #expect(!begins(300, at: 30.5))
        #expect(begins(300, at: 31))
        var fresh = SegmentSaves()
        let first = fresh.begin(bytesWritten: 0, now: 5, interval: 1)
        #expect(first)
    }

    @Test func onlyAKnownHostKeyIsAccepted() {
        #expect(HostKeyCheck.failure(.known, place: "h:22", knownHosts: "/k") == nil)
        #expect(HostKeyCheck.failure(.unknown, place: "h:22", knownHosts: "/k")
            == .hostKeyRejected("the SFTP server's host key for h:22 is not in /k (--ssh-known-hosts)"))
        guard case .hostKeyRejected(let message) = HostKeyCheck.failure(.changed, place: "h:22", knownHosts: "/k") else {
            Issue.record("a changed key is accepted")
            return
        }
        #expect(message.contains("differs from the one in /k"))
    }

    @Test func theLowerCeilingWins() {
        #expect(ByteCeiling.lowest(maxFileSize: nil, spoolRoom: nil) == nil)
        #expect(ByteCeiling.lowest(maxFileSize: 100, spoolRoom: nil)?.failure == .tooLarge("the file is larger than the limit of 100 bytes"))
        #expect(ByteCeiling.lowest(maxFileSize: 100, spoolRoom: 50)?.bytes == 50)
        #expect(ByteCeiling.lowest(maxFileSize: 40, spoolRoom: 50)?.bytes == 40)
    }
}
