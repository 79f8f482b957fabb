@testable import FerryClient
import Foundation
import Testing

/// The displays write through a `Console`; here the console is a pipe and the bytes are read back.
@Suite("Console output")
struct ConsoleOutputTests {
    /// Runs `body` with a console writing into a pipe and returns what it wrote.
    private func captured(_ body: (Console) -> Void) throws -> String {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw ClientError.failed("pipe failed") }
        body(Console(fd: fds[1]))
        close(fds[1])
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        close(fds[0])
        return String(decoding: bytes, as: UTF8.self)
    }

    static func job(_ id: String, _ state: JobState, received: Int64 = 0) -> Job {
        Job(id: id, url: "http://o/\(id)", state: state, filename: id, bytesReceived: received, bytesExpected: 100)
    }

    @Test func plainDisplayPrintsALineOnlyWhenAJobsLineChanges() throws {
        let text = try captured { console in
            let display = PlainBoardDisplay(console: console)
            var board = JobBoard(tracking: ["a", "b"])
            board.load([Self.job("a", .waiting), Self.job("b", .paused)])
            display.update(board, change: .state(""))
            display.update(board, change: .state(""))
            let change = board.apply(.progress(ProgressUpdate(id: "a", bytesReceived: 10, bytesExpected: 100, progress: 0.1)))
            display.update(board, change: change)
            let started = board.apply(.job(Self.job("a", .downloading, received: 10), restarted: false))
            display.update(board, change: started)
            display.update(board, change: .none)
            _ = board.apply(.removed(id: "b"))
            display.update(board, change: .removed("b"))
            display.finish(board)
        }
        #expect(text == """
            a  waiting  0%  0 B/100 B  a
            b  paused  0%  0 B/100 B  b
            a  waiting  10%  10 B/100 B  a
            a  downloading  10%  10 B/100 B  0 B/s  ETA --  a
            b  removed

            """)
    }

    @Test func liveRegionRedrawsInPlaceAndShowsTheCursorAtTheEnd() throws {
        let text = try captured { console in
            let region = LiveRegion(console: console)
            region.draw(["one", "two"])
            region.draw(["three"])
            region.finish()
        }
        #expect(text == "\u{1B}[?25l\u{1B}[2Kone\n\u{1B}[2Ktwo\n\u{1B}[J"
            + "\r\u{1B}[2A\u{1B}[2Kthree\n\u{1B}[J" + "\u{1B}[?25h")
    }

    @Test func liveDisplayHoldsBackBurstsUntilTheNextTick() throws {
        final class Clock: @unchecked Sendable { var now = 0.0 }
        let clock = Clock()
        let text = try captured { console in
            let display = LiveBoardDisplay(console: console, layout: .progressLines, style: .ascii,
                                           minimumInterval: 0.5, now: { clock.now })
            var board = JobBoard(tracking: ["a"])
            board.load([Self.job("a", .downloading)])
            display.update(board, change: .state(""))  // drawn: a state change
            let moved = board.apply(.progress(ProgressUpdate(id: "a", bytesReceived: 20, bytesExpected: 100, progress: 0.2)))
            display.update(board, change: moved)  // held
            display.tick(board)  // still held: too soon
            clock.now = 1
            display.tick(board)  // drawn
            display.tick(board)  // nothing new
        }
        #expect(text.components(separatedBy: "\u{1B}[2K").count - 1 == 2, "two frames: \(text.debugDescription)")
        #expect(text.contains("20%"))
    }
}
