import CCurl
import FerryCore
import Foundation
@testable import FerryEngine
import Testing

/// The exchange state machine alone: header lines, body chunks and the end go in, verdicts and steps come out.
/// No sockets, no disk; the time is a fixed date (a fake clock), so `Retry-After` dates are exact.
struct ExchangeTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)
    static let ok = Int32(CURLE_OK.rawValue)
    static let reset = Int32(CURLE_RECV_ERROR.rawValue)

    /// Feeds a whole response head (status line, fields, empty line); returns the verdict.
    static func respond(_ exchange: inout Exchange, _ status: Int, _ fields: [String: String] = [:], interim: [Int] = []) -> HeadVerdict? {
        for code in interim {
            _ = exchange.read(headerLine: "HTTP/1.1 \(code) Interim\r\n", now: now)
            _ = exchange.read(headerLine: "\r\n", now: now)
        }
        #expect(exchange.read(headerLine: "HTTP/1.1 \(status) X\r\n", now: now) == nil)
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            #expect(exchange.read(headerLine: "\(name): \(value)\r\n", now: now) == nil)
        }
        return exchange.read(headerLine: "\r\n", now: now)
    }

    /// Takes body chunks of `sizes` as the driver would, returning each step.
    static func feed(_ exchange: inout Exchange, _ sizes: [Int], segmentEnd: Int64, ceiling: ByteCeiling? = nil) -> [BodyStep] {
        sizes.map { size in
            let step = exchange.step(forBody: size, segmentEnd: segmentEnd, ceiling: ceiling)
            exchange.take(step)
            return step
        }
    }

    static let known = Exchange.Known(total: 1_000, etag: "\"v1\"", lastModified: nil, maxFileSize: nil)

    // MARK: the rest of a file

    @Test func aWholeFileIsWrittenInOrderAndReceivedAtItsEnd() {
        var exchange = Exchange(.rest(from: 0), known: .init())
        #expect(Self.respond(&exchange, 200, ["Content-Length": "1000", "ETag": "\"v1\""], interim: [100]) == .accept(offset: 0, total: 1_000, discarding: nil))
        let steps = Self.feed(&exchange, [400, 600], segmentEnd: 1_000)
        #expect(steps == [.write(offset: 0, count: 400, last: false), .write(offset: 400, count: 600, last: false)])
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: 1_000) == .received)
    }

    @Test func aFileOfUnknownSizeIsReceivedWhereItsBodyEnds() {
        var exchange = Exchange(.rest(from: 0), known: .init())
        #expect(Self.respond(&exchange, 200) == .accept(offset: 0, total: nil, discarding: nil))
        _ = Self.feed(&exchange, [10, 20], segmentEnd: SegmentTable.openEnd)
        #expect(exchange.position == 30)
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: SegmentTable.openEnd) == .received)
    }

    @Test func aResumeAppendsOnlyTheExactRangeOfTheSameFile() {
        var resumed = Exchange(.rest(from: 100), known: Self.known)
        #expect(Self.respond(&resumed, 206, ["Content-Range": "bytes 100-999/1000"]) == .accept(offset: 100, total: 1_000, discarding: nil))
        #expect(Self.feed(&resumed, [50], segmentEnd: 1_000) == [.write(offset: 100, count: 50, last: false)])

        var grown = Exchange(.rest(from: 100), known: Self.known)
        guard case .restart(_, false)? = Self.respond(&grown, 206, ["Content-Range": "bytes 100-1099/1100"]) else {
            Issue.record("a different size was appended")
            return
        }
        #expect(Self.feed(&grown, [10], segmentEnd: 1_000) == [.fail(.internalError("a body without a usable response head"))])
        guard case .restart = grown.ended(code: Int32(CURLE_WRITE_ERROR.rawValue), detail: "", segmentEnd: 1_000) else {
            Issue.record("a changed file did not restart")
            return
        }
    }

    @Test func theWholeFileForARangeRequestReplacesTheBytesOnDisk() {
        var exchange = Exchange(.rest(from: 100), known: Self.known)
        guard case .accept(0, 1_200, let reason?)? = Self.respond(&exchange, 200, ["Content-Length": "1200"]) else {
            Issue.record("a 200 to a range request must replace from zero")
            return
        }
        #expect(reason.contains("whole file"))
        #expect(exchange.position == 0)
        #expect(Self.feed(&exchange, [8], segmentEnd: 1_200) == [.write(offset: 0, count: 8, last: false)])
    }

    @Test func a416ForTheWholeFileMeansItIsComplete() {
        var exchange = Exchange(.rest(from: 1_000), known: Self.known)
        #expect(Self.respond(&exchange, 416, ["Content-Range": "bytes */1000"]) == .complete(total: 1_000))
        #expect(Self.feed(&exchange, [100], segmentEnd: 1_000) == [.discard])
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: nil) == .received)
    }

    @Test func aFileOverTheLimitIsRefusedBeforeAnyByte() {
        var known = Exchange.Known()
        known.maxFileSize = 500
        var exchange = Exchange(.rest(from: 0), known: known)
        let verdict = Self.respond(&exchange, 200, ["Content-Length": "1000"])
        #expect(verdict == .tooLarge(total: 1_000, limit: 500))
        #expect(verdict?.continues == false)
        #expect(exchange.ended(code: Int32(CURLE_WRITE_ERROR.rawValue), detail: "", segmentEnd: SegmentTable.openEnd)
            == .failed(.tooLarge("the file has 1000 bytes, more than the limit of 500")))
    }

    @Test func aBodyOfUnknownSizeStopsAtTheCeiling() {
        var exchange = Exchange(.rest(from: 0), known: .init())
        _ = Self.respond(&exchange, 200)
        let ceiling = ByteCeiling(bytes: 100, failure: .quotaExceeded("full"))
        let steps = Self.feed(&exchange, [60, 60], segmentEnd: SegmentTable.openEnd, ceiling: ceiling)
        #expect(steps == [.write(offset: 0, count: 60, last: false), .fail(.quotaExceeded("full"))])
        #expect(exchange.ended(code: Int32(CURLE_WRITE_ERROR.rawValue), detail: "", segmentEnd: SegmentTable.openEnd) == .failed(.quotaExceeded("full")))
    }

    // MARK: errors, retries and refusals

    @Test func anErrorStatusDiscardsItsBodyAndCarriesRetryAfterFromTheClock() {
        var exchange = Exchange(.rest(from: 0), known: .init())
        let date = HTTPDate.format(Self.now.addingTimeInterval(30))
        #expect(Self.respond(&exchange, 503, ["Retry-After": date]) == .httpError(status: 503, retryAfter: 30))
        #expect(Self.feed(&exchange, [512], segmentEnd: SegmentTable.openEnd) == [.discard])
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: SegmentTable.openEnd) == .failed(.httpStatus(503, retryAfter: 30)))
    }

    @Test func aRefusedAddressFailsAsAForbiddenDestination() {
        var exchange = Exchange(.rest(from: 0), known: .init())
        exchange.refuse("127.0.0.1 is not public")
        exchange.abort(.internalError("later causes do not win"))
        #expect(exchange.ended(code: Int32(CURLE_COULDNT_CONNECT.rawValue), detail: "", segmentEnd: nil)
            == .failed(.forbiddenDestination("127.0.0.1 is not public")))
    }

    @Test func aBrokenConnectionFailsWithLibcurlsCodeAndKeepsItsPosition() {
        var exchange = Exchange(.range(100..<200), known: Self.known)
        _ = Self.respond(&exchange, 206, ["Content-Range": "bytes 100-199/1000", "ETag": "\"v1\""])
        _ = Self.feed(&exchange, [30], segmentEnd: 200)
        #expect(exchange.position == 130)
        #expect(exchange.ended(code: Self.reset, detail: "reset", segmentEnd: 200) == .failed(.curl(code: Self.reset, detail: "reset")))
    }

    @Test func anAnswerThatEndsBeforeItsHeadIsAnInternalError() {
        let exchange = Exchange(.rest(from: 0), known: .init())
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: nil) == .failed(.internalError("the origin's answer ended before its headers")))
    }

    @Test func aHeadWithoutItsEndIsJudgedWhenTheBodyStarts() {
        var exchange = Exchange(.rest(from: 0), known: .init())
        _ = exchange.read(headerLine: "HTTP/1.0 200 OK\r\n", now: Self.now)
        _ = exchange.read(headerLine: "Content-Length: 5\r\n", now: Self.now)
        #expect(exchange.judgeUnfinishedHead(now: Self.now) == .accept(offset: 0, total: 5, discarding: nil))
        #expect(exchange.judgeUnfinishedHead(now: Self.now) == nil)
    }

    @Test func aRangeErrorFromLibcurlRestarts() {
        var exchange = Exchange(.rest(from: 100), known: Self.known)
        _ = Self.respond(&exchange, 206, ["Content-Range": "bytes 100-999/1000"])
        guard case .restart(_, false) = exchange.ended(code: Int32(CURLE_RANGE_ERROR.rawValue), detail: "", segmentEnd: 1_000) else {
            Issue.record("CURLE_RANGE_ERROR did not restart")
            return
        }
    }

    // MARK: segments

    @Test func aSegmentIsCutWhereItsRangeEnds() {
        // The first exchange asked for the rest of the file; the file was then split and its segment ends at 400.
        var exchange = Exchange(.rest(from: 0), known: .init())
        _ = Self.respond(&exchange, 200, ["Content-Length": "1000"])
        let steps = Self.feed(&exchange, [300, 300], segmentEnd: 400)
        #expect(steps == [.write(offset: 0, count: 300, last: false), .write(offset: 300, count: 100, last: true)])
        #expect(exchange.ended(code: Int32(CURLE_WRITE_ERROR.rawValue), detail: "", segmentEnd: 400) == .received)
    }

    @Test func aSegmentWhoseTailWasTakenOverStopsAtOnce() {
        var exchange = Exchange(.range(100..<500), known: Self.known)
        _ = Self.respond(&exchange, 206, ["Content-Range": "bytes 100-499/1000"])
        _ = Self.feed(&exchange, [200], segmentEnd: 500)
        // Another connection took [300, 500): the segment ends where this one already is.
        #expect(Self.feed(&exchange, [50], segmentEnd: 300) == [.cut])
        #expect(exchange.ended(code: Int32(CURLE_WRITE_ERROR.rawValue), detail: "", segmentEnd: 300) == .received)
    }

    @Test func aSegmentAnswerThatEndsEarlyIsUnusable() {
        var exchange = Exchange(.range(100..<200), known: Self.known)
        _ = Self.respond(&exchange, 206, ["Content-Range": "bytes 100-199/1000"])
        _ = Self.feed(&exchange, [40], segmentEnd: 200)
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: 200)
            == .failed(.unusableResponse("the answer for bytes 100-199 ended at 140")))
    }

    @Test func aSegmentAnswerForAnotherVersionRestartsTheDownload() {
        var changed = Exchange(.range(100..<200), known: Self.known)
        guard case .restart(_, false)? = Self.respond(&changed, 206, ["Content-Range": "bytes 100-199/1000", "ETag": "\"v2\""]) else {
            Issue.record("a new ETag was accepted")
            return
        }
        var ignored = Exchange(.range(100..<200), known: Self.known)
        guard case .restart(_, true)? = Self.respond(&ignored, 200, ["Content-Length": "1000", "ETag": "\"v1\""]) else {
            Issue.record("an origin ignoring ranges must restart with one connection")
            return
        }
    }
}
