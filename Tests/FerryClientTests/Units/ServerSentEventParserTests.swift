@testable import FerryClient
import Testing

@Suite("Server-Sent Events parser")
struct ServerSentEventParserTests {
    static let stream = "retry: 2000\n\nid: 42\nevent: progress\ndata: {\"id\":\"a\"}\n\n: ping\n\nid: 43\nevent: job\ndata: {\"id\":\"b\"}\n\n"

    @Test func ferrysStreamInOneChunk() {
        var parser = ServerSentEventParser()
        let events = parser.feed(Array(Self.stream.utf8))
        #expect(events == [
            ServerSentEvent(id: "42", event: "progress", data: #"{"id":"a"}"#),
            ServerSentEvent(id: "43", event: "job", data: #"{"id":"b"}"#),
        ])
        #expect(parser.retryMilliseconds == 2000)
        #expect(parser.lastEventID == "43")
        #expect(parser.commentCount == 1)
    }

    @Test func everySplitOfTheBytesGivesTheSameEvents() {
        let bytes = Array(Self.stream.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        var whole = ServerSentEventParser()
        let expected = whole.feed(bytes)
        #expect(expected.count == 2)
        for cut in 0...bytes.count {
            var parser = ServerSentEventParser()
            let events = parser.feed(bytes[..<cut]) + parser.feed(bytes[cut...])
            #expect(events == expected, "split at \(cut)")
        }
        var byteByByte = ServerSentEventParser()
        #expect(bytes.flatMap { byteByByte.feed([$0]) } == expected)
    }

    @Test func lineEndingsMayBeCRLFOrCRAlone() {
        var parser = ServerSentEventParser()
        let events = parser.feed(Array("data: one\r\rdata: two\r\n\r\ndata: three\n\n".utf8))
        #expect(events.map(\.data) == ["one", "two", "three"])
    }

    @Test func dataLinesJoinAndTheDefaultNameIsMessage() {
        var parser = ServerSentEventParser()
        let events = parser.feed(Array("data: a\ndata\ndata:b\n\n".utf8))
        #expect(events == [ServerSentEvent(id: nil, event: "message", data: "a\n\nb")])
    }

    @Test func anEventWithoutDataIsNotDispatchedAndAResetHasNoID() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("id: 7\nevent: job\n\n".utf8)).isEmpty)
        #expect(parser.lastEventID == "7", "the id persists even though nothing was dispatched")
        let reset = parser.feed(Array("event: reset\ndata: {}\n\n".utf8))
        #expect(reset == [ServerSentEvent(id: nil, event: "reset", data: "{}")])
        #expect(parser.lastEventID == "7")
    }

    @Test func oddFieldsAreIgnored() {
        var parser = ServerSentEventParser()
        let events = parser.feed(Array("\u{FEFF}data: x\nunknown: y\nretry: soon\nid: a\u{0}b\n\n".utf8))
        #expect(events == [ServerSentEvent(id: nil, event: "message", data: "x")])
        #expect(parser.retryMilliseconds == nil)
    }

    @Test func anUnfinishedEventWaitsForItsBlankLine() {
        var parser = ServerSentEventParser()
        #expect(parser.feed(Array("id: 1\nevent: job\ndata: {}\n".utf8)).isEmpty)
        #expect(parser.feed(Array("\n".utf8)).count == 1)
    }
}
