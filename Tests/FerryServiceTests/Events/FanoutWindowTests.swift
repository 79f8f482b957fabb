import FerryHTTP
import Foundation
import Testing
@testable import FerryService

@Suite struct FanoutWindowTests {
    private func bytes(_ count: Int, _ value: UInt8 = 1) -> SharedChunk { SharedChunk([UInt8](repeating: value, count: count)) }

    @Test func sequencesCountFromZeroAndACurrentCursorIsOwedNothing() throws {
        var window = FanoutWindow(maxBytes: 1_000)
        #expect(window.nextSequence == 0)
        #expect(try #require(window.pending(from: 0)).batches.isEmpty)
        #expect(window.append(bytes(10), lastID: 5) == 0)
        #expect(window.append(bytes(20), lastID: 9) == 1)
        #expect(window.nextSequence == 2)
        #expect(try #require(window.pending(from: 2)).byteCount == 0)
    }

    @Test func aCursorIsOwedEveryLaterBatchInOrder() throws {
        var window = FanoutWindow(maxBytes: 1_000)
        window.append(bytes(10, 1), lastID: 5)
        window.append(bytes(20, 2), lastID: 9)
        window.append(bytes(30, 3), lastID: 12)
        let pending = try #require(window.pending(from: 1))
        #expect(pending.byteCount == 50)
        #expect(pending.batches.map(\.lastID) == [9, 12])
        #expect(pending.batches.map { $0.chunk?.payload.first } == [2, 3])
    }

    @Test func oldBatchesAreEvictedBeyondTheByteLimitAndTheirCursorsFallOut() throws {
        var window = FanoutWindow(maxBytes: 100)
        for index in 0..<10 { window.append(bytes(40), lastID: Int64(index + 1)) }
        // The newest batches within 100 bytes beyond the newest: 40 + 40 kept before it.
        #expect(window.count == 3)
        #expect(window.byteCount == 120)
        #expect(window.pending(from: 6) == nil)
        #expect(try #require(window.pending(from: 7)).batches.map(\.lastID) == [8, 9, 10])
        #expect(window.nextSequence == 10)
    }

    @Test func theNewestBatchIsKeptEvenWhenLargerThanTheLimit() throws {
        var window = FanoutWindow(maxBytes: 10)
        window.append(bytes(5), lastID: 1)
        window.append(bytes(500), lastID: 2)
        #expect(window.count == 1)
        #expect(window.pending(from: 0) == nil)
        #expect(try #require(window.pending(from: 1)).byteCount == 500)
    }

    @Test func manyAppendsKeepSequencesConsistentAcrossCompaction() throws {
        var window = FanoutWindow(maxBytes: 64)
        for index in 0..<5_000 {
            #expect(window.append(bytes(8), lastID: Int64(index + 1)) == index)
        }
        let pending = try #require(window.pending(from: 4_995))
        #expect(pending.batches.map(\.lastID) == [4_996, 4_997, 4_998, 4_999, 5_000])
        #expect(window.count <= 9)
    }

    @Test func anEventKeepsOnlyItsFrameAndGivesItsDataBack() {
        let data = Array(#"{"id":"j1","state":"waiting"}"#.utf8)
        let event = ServerEvent(id: 42, kind: .job, jobID: "j1", data: data)
        #expect(event.data == data)
        #expect(Array(event.dataBytes) == data)
        #expect(event.frame == Array("id: 42\nevent: job\ndata: ".utf8) + data + [10, 10])
        let reset = ServerEvent.reset()
        #expect(reset.data == Array("{}".utf8))
        #expect(reset.frame == Array("event: reset\ndata: {}\n\n".utf8))
    }
}
