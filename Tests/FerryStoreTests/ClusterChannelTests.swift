import Foundation
import Testing
@testable import FerryStore

/// The pure parts of several nodes: notification payloads, the listener's reconnect delays, the replay window.
@Suite("Cluster values")
struct ClusterChannelTests {
    @Test func jobPayloadsStayUnderPostgresLimitAndLoseNoId() {
        #expect(ClusterChannel.jobPayloads([String]()).isEmpty)
        #expect(ClusterChannel.jobPayloads(["a", "b"]) == ["a,b"])
        let ids = (0..<3000).map { "job-\($0)-" + String(repeating: "x", count: 20) }
        let payloads = ClusterChannel.jobPayloads(ids)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= ClusterChannel.payloadLimit })
        #expect(payloads.flatMap(ClusterChannel.jobIDs(inPayload:)) == ids)
    }

    @Test func textArraysQuoteEveryElementAndEscapeBackslashesAndQuotes() {
        #expect(PostgresParameter.textArray([]) == .text("{}"))
        #expect(PostgresParameter.textArray(["a", "b c", "NULL", ""]) == .text(#"{"a","b c","NULL",""}"#))
        #expect(PostgresParameter.textArray([#"x"y"#, #"a\b"#, "é,ü"]) == .text(#"{"x\"y","a\\b","é,ü"}"#))
    }

    @Test func commandsReachOnlyTheirNode() {
        let payload = ClusterChannel.commandPayload("cancel j1\nwith a second line", to: "node-a.example")
        #expect(ClusterChannel.command(inPayload: payload, for: "node-a.example") == "cancel j1\nwith a second line")
        #expect(ClusterChannel.command(inPayload: payload, for: "node-a") == nil)
        #expect(ClusterChannel.command(inPayload: "no line break", for: "no line break") == nil)
        #expect(ClusterChannel.command(inPayload: ClusterChannel.commandPayload("", to: "n"), for: "n") == "")
    }

    @Test func progressPayloadsCarryEveryEventUnderTheLimit() {
        #expect(ClusterChannel.progressPayloads(from: "n", []).isEmpty)
        let events = (0..<200).map { Array(#"{"id":"job-\#($0)","phase":"downloading","bytesReceived":\#($0)}"#.utf8) }
        let payloads = ClusterChannel.progressPayloads(from: "node-a", events)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count <= ClusterChannel.payloadLimit })
        let read = payloads.compactMap(ClusterChannel.progress(inPayload:))
        #expect(read.allSatisfy { $0.node == "node-a" })
        #expect(read.flatMap(\.events) == events)
        // An event with a line break, or too long for any payload, is left out.
        let odd = [Array("a\nb".utf8), [UInt8](repeating: 0x61, count: 8_000), Array("{}".utf8)]
        #expect(ClusterChannel.progressPayloads(from: "n", odd) == ["n\n{}"])
        #expect(ClusterChannel.progress(inPayload: "") == nil)
    }

    @Test func sessionPayloadsNameANonceAndItsExpiry() {
        let expiry = Date(timeIntervalSince1970: 1_800_000_000.123)
        let payload = ClusterChannel.sessionPayload(nonce: "abc", expiresAt: expiry)
        #expect(payload == "abc 1800000000123")
        #expect(ClusterChannel.session(inPayload: payload)?.nonce == "abc")
        #expect(ClusterChannel.session(inPayload: payload)?.expiresAt == expiry)
        #expect(ClusterChannel.session(inPayload: ClusterChannel.secretReplaced) == nil)
    }

    @Test func aCommandFitsWhenItsPayloadDoes() {
        #expect(ClusterChannel.fits("pause j", to: "n"))
        #expect(ClusterChannel.fits(String(repeating: "x", count: ClusterChannel.payloadLimit - 2), to: "n"))
        #expect(!ClusterChannel.fits(String(repeating: "x", count: ClusterChannel.payloadLimit - 1), to: "n"))
    }

    @Test func reconnectDelaysDoubleUpToTheLongest() {
        let schedule = ReconnectSchedule(first: .milliseconds(100), longest: .seconds(1))
        #expect((0..<6).map { schedule.delay(afterFailures: $0) }
                == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        #expect(schedule.delay(afterFailures: 10_000) == .seconds(1))
        #expect(schedule.delay(afterFailures: -1) == .milliseconds(100))
        #expect(ReconnectSchedule(first: .seconds(2), longest: .seconds(1)).delay(afterFailures: 3) == .seconds(2))
    }

    @Test func theReplayWindowSaysWhoMustReset() {
        let window = EventWindow(purgedThrough: 10, latest: 20)
        #expect(window.canReplay(after: 10) && window.canReplay(after: 15) && window.canReplay(after: 20))
        #expect(!window.canReplay(after: 9))   // events after 9 were purged
        #expect(!window.canReplay(after: 21))  // not an id issued yet
        #expect(EventWindow(purgedThrough: 0, latest: 0).canReplay(after: 0))
    }

    @Test func leasesAreWholeMilliseconds() {
        #expect(PostgresJobStore.milliseconds(.seconds(15)) == 15_000)
        #expect(PostgresJobStore.milliseconds(.milliseconds(1500)) == 1500)
        #expect(PostgresJobStore.milliseconds(.microseconds(10)) == 1)
        #expect(PostgresJobStore.milliseconds(.zero) == 1)
    }

    @Test func conflictsAndLostConnectionsAreTold() {
        func error(_ sqlstate: String) -> JobStoreError { .postgres(sqlstate: sqlstate, message: "m", operation: "o") }
        #expect(error("40001").isConflict && error("40P01").isConflict)
        #expect(!error("23505").isConflict && !error("08006").isConflict)
        #expect(!JobStoreError.sqlite(code: 5, message: "busy", operation: "o").isConflict)
        #expect(error("08006").isUnavailable && error("57P01").isUnavailable && !error("40001").isUnavailable)
    }

    @Test func onlyWaitingDownloadingAndDeliveringNeedANode() {
        #expect(PostgresJobStore.runningStates == ["waiting", "downloading", "delivering"])
    }
}
