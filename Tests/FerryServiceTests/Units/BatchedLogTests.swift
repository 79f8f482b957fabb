import Foundation
import Logging
import Testing
@testable import FerryService
#if canImport(Glibc)
import Glibc
#endif

@Suite("Batched log")
struct BatchedLogTests {
    /// A pipe whose read end never blocks.
    final class Pipe {
        let read: Int32
        let write: Int32
        init() {
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            read = fds[0]
            write = fds[1]
            _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
        }
        deinit { close(read); close(write) }

        func available() -> String {
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = Glibc.read(read, &buffer, buffer.count)
                if n <= 0 { break }
                bytes += buffer[0..<n]
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @Test func infoLinesWaitNoticeLinesGoAtOnceInOrder() {
        let pipe = Pipe()
        let log = BatchedLog(fd: pipe.write, delay: .seconds(3600))
        log.append(" first", urgent: false)
        log.append(" second", urgent: false)
        #expect(pipe.available() == "")
        log.append(" third", urgent: true)
        let lines = pipe.available().split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.map { $0.hasSuffix(" first") } == [true, false, false])
        #expect(lines[1].hasSuffix(" second") && lines[2].hasSuffix(" third"))
        // Each line starts with the local time, as StreamLogHandler writes it.
        #expect(lines.allSatisfy { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} "#, options: .regularExpression) != nil })
        log.append(" fourth", urgent: false)
        log.flush()
        #expect(pipe.available().hasSuffix(" fourth\n"))
    }

    @Test func aFullBufferIsWrittenWithoutWaiting() {
        let pipe = Pipe()
        let log = BatchedLog(fd: pipe.write, delay: .seconds(3600), limit: 100)
        for i in 0..<5 { log.append(" line \(i)", urgent: false) }
        let text = pipe.available()
        #expect(text.contains(" line 0\n"))
        log.flush()
    }

    @Test func delayedLinesAreWrittenByTheTimer() async throws {
        let pipe = Pipe()
        let log = BatchedLog(fd: pipe.write, delay: .milliseconds(20))
        log.append(" later", urgent: false)
        var text = ""
        for _ in 0..<200 where !text.contains(" later") {
            try await Task.sleep(for: .milliseconds(10))
            text += pipe.available()
        }
        #expect(text.hasSuffix(" later\n"))
    }

    @Test func handlerWritesStreamLogHandlersFormat() {
        let pipe = Pipe()
        let log = BatchedLog(fd: pipe.write, delay: .seconds(3600))
        var handler = BatchedLogHandler(label: "ferry", log: log)
        handler[metadataKey: "b"] = "2"
        handler.log(event: LogEvent(level: .warning, message: "careful", metadata: ["a": "1"], source: "FerryService",
                                    file: #fileID, function: #function, line: #line))
        let text = pipe.available()
        #expect(text.hasSuffix(" warning ferry: a=1 b=2 [FerryService] careful\n"))
    }
}
