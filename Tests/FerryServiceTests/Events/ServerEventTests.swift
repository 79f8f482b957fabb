import Foundation
import Testing
@testable import FerryService

@Suite struct ServerEventTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func jobFrameHasIdEventAndDataLines() {
        let event = ServerEvent(id: 42, kind: .job, jobID: "j1", data: Array(#"{"id":"j1","state":"waiting"}"#.utf8))
        #expect(text(event.frame) == "id: 42\nevent: job\ndata: {\"id\":\"j1\",\"state\":\"waiting\"}\n\n")
        #expect(event.isMandatory)
    }

    @Test(arguments: [ServerEvent.Kind.job, .progress, .removed])
    func everyLoggedKindUsesItsAPIName(kind: ServerEvent.Kind) {
        let event = ServerEvent(id: 7, kind: kind, jobID: "x", data: Array("{}".utf8))
        #expect(text(event.frame) == "id: 7\nevent: \(kind.rawValue)\ndata: {}\n\n")
        #expect(event.isMandatory == (kind != .progress))
    }

    @Test func apiNamesAreTheContractedOnes() {
        #expect(ServerEvent.Kind.allCases.map(\.rawValue) == ["job", "progress", "removed", "reset"])
    }

    @Test func resetHasNoIdLine() {
        let reset = ServerEvent.reset()
        #expect(text(reset.frame) == "event: reset\ndata: {}\n\n")
        #expect(reset.id == 0)
        #expect(reset.jobID == nil)
        #expect(!reset.isMandatory)
        let withData = ServerEvent(id: 99, kind: .reset, jobID: nil, data: Array(#"{"reason":"x"}"#.utf8))
        #expect(text(withData.frame) == "event: reset\ndata: {\"reason\":\"x\"}\n\n")
        #expect(withData.id == 0)
    }

    @Test func equalityIgnoresNothingButTheDerivedFrame() {
        let a = ServerEvent(id: 1, kind: .progress, jobID: "a", data: Array("{}".utf8))
        #expect(a == ServerEvent(id: 1, kind: .progress, jobID: "a", data: Array("{}".utf8)))
        #expect(a != ServerEvent(id: 2, kind: .progress, jobID: "a", data: Array("{}".utf8)))
        #expect(a != ServerEvent(id: 1, kind: .job, jobID: "a", data: Array("{}".utf8)))
        #expect(a != ServerEvent(id: 1, kind: .progress, jobID: "b", data: Array("{}".utf8)))
        #expect(a != ServerEvent(id: 1, kind: .progress, jobID: "a", data: Array("{ }".utf8)))
    }

    @Test func multiByteDataIsCopiedVerbatim() {
        let data = Array(#"{"filename":"résumé – 日本.pdf"}"#.utf8)
        let event = ServerEvent(id: 3, kind: .job, jobID: "j", data: data)
        #expect(Array(event.frame.dropFirst("id: 3\nevent: job\ndata: ".utf8.count).dropLast(2)) == data)
    }

    @Test func dataWithALineBreakIsRefused() async {
        // A line break would let payload text be read as further SSE fields by every client.
        await #expect(processExitsWith: .failure) {
            _ = ServerEvent(id: 1, kind: .job, jobID: "a", data: Array("{\"a\":1}\nevent: removed".utf8))
        }
        await #expect(processExitsWith: .failure) {
            _ = ServerEvent(id: 1, kind: .job, jobID: "a", data: Array("{}\r".utf8))
        }
    }
}
