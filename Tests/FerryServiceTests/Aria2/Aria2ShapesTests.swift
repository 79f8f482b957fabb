import FerryCore
import FerryStore
import Foundation
import Testing
@testable import FerryService

@Suite("aria2 status objects, options and offsets")
struct Aria2ShapesTests {
    @Test func offsetsFollowAria2sPaginationRules() {
        let list = Array(0..<5)
        #expect(Aria2Page(offset: 0, num: 2, count: 5).select(list) == [0, 1])
        #expect(Aria2Page(offset: 3, num: 10, count: 5).select(list) == [3, 4])
        #expect(Aria2Page(offset: 5, num: 1, count: 5).select(list) == [])
        #expect(Aria2Page(offset: 0, num: 0, count: 5).select(list) == [])
        // Negative: from the end, backwards.
        #expect(Aria2Page(offset: -1, num: 1, count: 5).select(list) == [4])
        #expect(Aria2Page(offset: -1, num: 3, count: 5).select(list) == [4, 3, 2])
        #expect(Aria2Page(offset: -2, num: 10, count: 5).select(list) == [3, 2, 1, 0])
        #expect(Aria2Page(offset: -1, num: 1000, count: 5).select(list) == [4, 3, 2, 1, 0])
        #expect(Aria2Page(offset: -6, num: 2, count: 5).select(list) == [])
        #expect(Aria2Page(offset: -1, num: 0, count: 5).select(list) == [])
        #expect(Aria2Page(offset: -1, num: 1, count: 0).select([Int]()) == [])
    }

    /// A value as a client reads it (status objects are written straight to JSON, `RPCValue.json`).
    static func value(_ written: RPCValue) -> RPCValue? { RPCValue.parse(written.bytes) }

    func job(_ state: JobState, received: Int64 = 1_500_000, expected: Int64? = 3_000_000) -> JobRecord {
        var job = JobRecord(id: "abc", url: "https://user:pw@o.example/f.bin", state: state, dedupeKey: "k", createdAt: Date())
        job.bytesReceived = received
        job.bytesExpected = expected
        job.filename = "f.bin"
        return job
    }

    @Test func statusObjectsUseAria2sNamesAndDecimalStrings() throws {
        let status = Aria2Status(directory: "/spool/files")
        let written = status.render(job(.downloading), rates: LiveRates(speed: 1234.6, eta: 2))
        let rendered = try #require(Self.value(written)?.object)
        #expect(rendered["gid"] == .string(JobGID.of("abc")))
        #expect(rendered["status"] == .string("active"))
        #expect(rendered["totalLength"] == .string("3000000") && rendered["completedLength"] == .string("1500000"))
        #expect(rendered["downloadSpeed"] == .string("1235") && rendered["uploadSpeed"] == .string("0"))
        #expect(rendered["connections"] == .string("1") && rendered["numPieces"] == .string("3"))
        #expect(rendered["pieceLength"] == .string("1048576") && rendered["dir"] == .string("/spool/files"))
        #expect(rendered["errorCode"] == nil && rendered["bittorrent"] == nil && rendered["following"] == nil)
        let file = try #require(rendered["files"]?.array?.first?.object)
        #expect(file["path"] == .string("/spool/files/f.bin") && file["index"] == .string("1"))
        #expect(file["uris"] == .array([.object(["uri": .string("https://***@o.example/f.bin"), "status": .string("used")])]))
        let states: [(JobState, String)] = [(.waiting, "waiting"), (.delivering, "active"), (.paused, "paused"),
                                            (.failed, "error"), (.finished, "complete"), (.cancelled, "removed")]
        for (state, word) in states {
            #expect(Self.value(status.render(job(state), rates: nil))?.object?["status"] == .string(word))
        }
        var failed = job(.failed)
        failed.error = JobFailure(code: .httpError, message: "the origin answered 404", httpStatus: 404)
        let error = try #require(Self.value(status.render(failed, rates: nil))?.object)
        #expect(error["errorCode"] == .string("3") && error["errorMessage"] == .string("the origin answered 404"))
        #expect(error["downloadSpeed"] == .string("0") && error["connections"] == .string("0"))
    }

    @Test func keysKeepOnlyTheFieldsNamed() {
        let status = Aria2Status(directory: "/d")
        let only = Self.value(status.render(job(.paused), rates: nil, keys: ["gid", "status", "nokey"]))
        #expect(only == .object(["gid": .string(JobGID.of("abc")), "status": .string("paused")]))
        #expect((Self.value(status.render(job(.paused), rates: nil, keys: []))?.object?.count ?? 0) > 10)
    }

    @Test func addUriOptionsMapOntoJobFields() throws {
        let body = try Aria2Options.jobBody(uris: ["http://a/x", "http://b/x"], options: [
            "out": .string("y.bin"), "header": .array([.string("X-A: 1"), .string("Cookie: c=d")]),
            "max-download-limit": .string("2K"), "split": .string("5"), "max-connection-per-server": .string("40"),
            "checksum": .string("sha-256=abcd"), "pause": .string("true"), "dir": .string("/elsewhere"),
            "continue": .string("true"),
        ])
        #expect(body.url == "http://a/x" && body.mirrors == ["http://b/x"] && body.filename == "y.bin")
        #expect(body.headers == ["X-A": "1", "Cookie": "c=d"] && body.maxBytesPerSecond == 2048)
        #expect(body.connections == 16 && body.paused == true)
        #expect(body.checksum?.algorithm == "sha-256" && body.checksum?.value == "abcd")
        #expect(throws: Aria2Error("URI is not provided.")) { try Aria2Options.jobBody(uris: [], options: [:]) }
        #expect(throws: Aria2Error.option("split")) { try Aria2Options.jobBody(uris: ["http://a/"], options: ["split": .string("abc")]) }
        #expect(throws: Aria2Error.option("pause")) { try Aria2Options.jobBody(uris: ["http://a/"], options: ["pause": .string("yes")]) }
        #expect(try Aria2Options.rate("x", .string("0")) == nil)
        #expect(try Aria2Options.rate("x", .string("1M")) == 1_048_576)
        #expect(try Aria2Options.rate("x", .int(500)) == 500)
    }

    @Test func globalOptionsAreTheSettings() throws {
        let change = try #require(try Aria2Options.settingsChange(
            ["max-overall-download-limit": .string("0"), "max-concurrent-downloads": .string("3"), "dir": .string("/x")],
            range: 1...1024))
        #expect(change.maxBytesPerSecond == .some(nil) && change.maxConcurrent == 3)
        #expect(try Aria2Options.settingsChange(["dir": .string("/x")], range: 1...1024) == nil)
        #expect(throws: Aria2Error.option("max-concurrent-downloads")) {
            try Aria2Options.settingsChange(["max-concurrent-downloads": .string("0")], range: 1...1024)
        }
    }

    @Test func positionsBecomePrioritiesInTheWaitingQueue() throws {
        func waiting(_ priorities: [Int]) -> [JobRecord] {
            priorities.enumerated().map { index, priority in
                var job = JobRecord(id: "j\(index)", sequence: Int64(index), url: "https://o/", dedupeKey: "j", createdAt: Date())
                job.priority = priority
                return job
            }
        }
        #expect(Aria2Jobs.priority(forPosition: 0, among: []) == 0)
        #expect(Aria2Jobs.priority(forPosition: 0, among: waiting([0, 0])) == 1)
        #expect(Aria2Jobs.priority(forPosition: 1, among: waiting([5, 0])) == 1)
        #expect(Aria2Jobs.priority(forPosition: 2, among: waiting([5, 0])) == -1)
        #expect(Aria2Jobs.priority(forPosition: 9, among: waiting([5, 3])) == 0)
        #expect(try Aria2Jobs.position(-1, how: "POS_END", current: 0, others: 4) == 3)
        #expect(try Aria2Jobs.position(2, how: "POS_CUR", current: 3, others: 4) == 4)
        #expect(try Aria2Jobs.position(-9, how: "POS_SET", current: 3, others: 4) == 0)
        #expect(throws: Aria2Error("Illegal argument.")) { try Aria2Jobs.position(0, how: "BAD", current: 0, others: 1) }
    }
}

@Suite("aria2 notifications")
struct Aria2NotificationTests {
    @Test func stateChangesBecomeAria2sNotifications() {
        #expect(Aria2Notifications.method(from: .waiting, to: .downloading) == "aria2.onDownloadStart")
        #expect(Aria2Notifications.method(from: nil, to: .downloading) == "aria2.onDownloadStart")
        #expect(Aria2Notifications.method(from: .delivering, to: .downloading) == nil)
        #expect(Aria2Notifications.method(from: .downloading, to: .paused) == "aria2.onDownloadPause")
        #expect(Aria2Notifications.method(from: nil, to: .paused) == nil)
        #expect(Aria2Notifications.method(from: .paused, to: .cancelled) == "aria2.onDownloadStop")
        #expect(Aria2Notifications.method(from: .delivering, to: .finished) == "aria2.onDownloadComplete")
        #expect(Aria2Notifications.method(from: .downloading, to: .failed) == "aria2.onDownloadError")
        #expect(Aria2Notifications.method(from: .downloading, to: .downloading) == nil)
        #expect(Aria2Notifications.method(from: .downloading, to: .delivering) == nil)
        #expect(Aria2Notifications.method(from: .paused, to: .waiting) == nil)
        #expect(Aria2Notifications.message("aria2.onDownloadStart", gid: "0123456789abcdef")
            == #"{"jsonrpc":"2.0","method":"aria2.onDownloadStart","params":[{"gid":"0123456789abcdef"}]}"#)
    }

    @Test func theJobsOwnStateIsReadFromItsEvent() {
        var job = JobRecord(id: "a", url: "https://o.example/\"state\":\"failed\"", state: .downloading, dedupeKey: "a",
                            createdAt: Date())
        job.delivery = nil
        let data = JobView.render(job, rates: nil)
        #expect(Aria2Notifications.state(inJobEvent: data[...]) == .downloading)
        #expect(Aria2Notifications.state(inJobEvent: Array("{\"id\":\"a\"}".utf8)[...]) == nil)
    }
}
