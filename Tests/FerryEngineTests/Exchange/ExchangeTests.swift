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
        #expect(exchange.judgeBeforeBody(report: .init(), now: Self.now) == .accept(offset: 0, total: 5, discarding: nil))
        #expect(exchange.judgeBeforeBody(report: .init(), now: Self.now) == nil)
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

    // MARK: FTP and SFTP (a size from the server, resume by offset)

    static let partial = Int32(CURLE_PARTIAL_FILE.rawValue)
    static let badResume = Int32(CURLE_BAD_DOWNLOAD_RESUME.rawValue)
    static let mtime = "Tue, 14 Nov 2023 22:13:20 GMT"
    static let knownByOffset = Exchange.Known(total: 1_000, etag: nil, lastModified: mtime, maxFileSize: nil)

    @Test func anFTPFileIsJudgedByItsReportedSizeAtTheFirstByteAndItsControlRepliesAreNotAHead() {
        var exchange = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset)
        for line in ["220 ready\r\n", "HTTP/1.1 200 OK\r\n", "213 1000\r\n", "\r\n"] {
            #expect(exchange.read(headerLine: line, now: Self.now) == nil)
        }
        #expect(exchange.head == nil)
        let report = Exchange.ServerReport(remaining: 1_000, modified: Self.mtime)
        #expect(exchange.judgeBeforeBody(report: report, now: Self.now) == .accept(offset: 0, total: 1_000, discarding: nil))
        #expect(exchange.report == report)
        #expect(Self.feed(&exchange, [1_000], segmentEnd: 1_000) == [.write(offset: 0, count: 1_000, last: false)])
        #expect(exchange.ended(code: Self.ok, detail: "", segmentEnd: 1_000) == .received)
    }

    @Test func anFTPResumeContinuesOnlyTheSameSizeAndTime() {
        var same = Exchange(.rest(from: 400), known: Self.knownByOffset, dialect: .byteOffset)
        #expect(same.judgeBeforeBody(report: .init(remaining: 600, modified: Self.mtime), now: Self.now) == .accept(offset: 400, total: 1_000, discarding: nil))
        #expect(Self.feed(&same, [600], segmentEnd: 1_000) == [.write(offset: 400, count: 600, last: false)])

        var grown = Exchange(.rest(from: 400), known: Self.knownByOffset, dialect: .byteOffset)
        #expect(grown.judgeBeforeBody(report: .init(remaining: 700, modified: Self.mtime), now: Self.now)
                == .restart(reason: "the file's size changed from 1000 to 1100", singleConnection: false))
        #expect(Self.feed(&grown, [10], segmentEnd: 1_000) == [.fail(.internalError("a body without a usable response head"))])
        #expect(grown.ended(code: Self.ok, detail: "", segmentEnd: 1_000) == .restart(reason: "the file's size changed from 1000 to 1100", singleConnection: false))

        var touched = Exchange(.rest(from: 400), known: Self.knownByOffset, dialect: .byteOffset)
        guard case .restart = touched.judgeBeforeBody(report: .init(remaining: 600, modified: "Wed, 15 Nov 2023 00:00:00 GMT"), now: Self.now) else {
            Issue.record("a new modification time must restart from zero")
            return
        }
        var sizeless = Exchange(.rest(from: 400), known: Self.knownByOffset, dialect: .byteOffset)
        #expect(sizeless.judgeBeforeBody(report: .init(remaining: nil, modified: nil), now: Self.now)
                == .restart(reason: "the server gave no size to confirm the bytes on disk", singleConnection: false))
    }

    @Test func anFTPExchangeWithoutBodyIsCompleteOnlyAtTheRecordedSize() {
        var complete = Exchange(.rest(from: 1_000), known: Self.knownByOffset, dialect: .byteOffset)
        // FTP reports the whole size when nothing follows the offset; what counts is that libcurl said OK.
        #expect(complete.judgeAtEnd(code: Self.ok, report: .init(remaining: 1_000, modified: Self.mtime)) == .complete(total: 1_000))
        #expect(complete.ended(code: Self.ok, detail: "", segmentEnd: 1_000) == .received)

        var shrunk = Exchange(.rest(from: 800), known: Self.knownByOffset, dialect: .byteOffset)
        guard case .restart = shrunk.judgeAtEnd(code: Self.ok, report: .init(remaining: 800, modified: nil)) else {
            Issue.record("a file that now ends at the bytes on disk changed: restart")
            return
        }
        var empty = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset)
        #expect(empty.judgeAtEnd(code: Self.ok, report: .init(remaining: 0, modified: nil)) == .accept(offset: 0, total: 0, discarding: nil))
        #expect(empty.ended(code: Self.ok, detail: "", segmentEnd: 0) == .received)

        var failed = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset)
        #expect(failed.judgeAtEnd(code: Self.reset, report: .init()) == nil)
        var http = Exchange(.rest(from: 0), known: .init())
        #expect(http.judgeAtEnd(code: Self.ok, report: .init(remaining: 0, modified: nil)) == nil)
    }

    @Test func aServerSmallerThanTheBytesOnDiskRestartsAndOneShortOfItsSizeFailsClearly() {
        let shorter = Exchange(.rest(from: 900), known: Self.knownByOffset, dialect: .byteOffset)
        #expect(shorter.ended(code: Self.badResume, detail: "Offset is larger than file size", segmentEnd: 1_000)
                == .restart(reason: "the file on the server is smaller than the bytes on disk", singleConnection: false))

        var liar = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset)
        #expect(liar.judgeBeforeBody(report: .init(remaining: 1_000, modified: nil), now: Self.now) == .accept(offset: 0, total: 1_000, discarding: nil))
        _ = Self.feed(&liar, [600], segmentEnd: 1_000)
        #expect(liar.ended(code: Self.partial, detail: "Received only partial file", segmentEnd: 1_000)
                == .failed(.unusableResponse("the server said the file has 1000 bytes, but its data ended at 600")))
        // On resume it sends nothing at all after the same claim: still said plainly.
        var resumedLiar = Exchange(.rest(from: 600), known: Self.knownByOffset, dialect: .byteOffset)
        #expect(resumedLiar.judgeAtEnd(code: Self.partial, report: .init(remaining: 400, modified: nil)) == .accept(offset: 600, total: 1_000, discarding: nil))
        #expect(resumedLiar.ended(code: Self.partial, detail: "Received only partial file: 0 bytes", segmentEnd: 1_000)
                == .failed(.unusableResponse("the server said the file has 1000 bytes, but its data ended at 600")))
    }

    /// The control replies of an FTP download from byte 0 with Ferry's own `*SIZE` (`CURLOPT_PREQUOTE`): MDTM's
    /// 213 comes first, the SIZE reply is the one just before RETR's 1xx.
    static func ftpReplies(size: String) -> [String] {
        ["220 ready\r\n", "230 Login successful.\r\n", "257 \"/\" is the current directory.\r\n", "213 20231114221320\r\n",
         "229 Entering extended passive mode (|||40000|).\r\n", "200 Type set to: Binary.\r\n", size + "\r\n",
         "150 Opening data connection.\r\n"]
    }

    @Test func theQuotedSizeIsTheReplyJustBeforeRetrsPreliminaryReplyNeverMDTMs() {
        func read(_ lines: [String]) -> Int64? {
            var reply = QuotedSizeReply()
            for line in lines { reply.read(line) }
            return reply.size
        }
        #expect(read(Self.ftpReplies(size: "213 295904")) == 295_904)
        // Refused (the `*` lets the server do that): MDTM's 213 is not taken for a size.
        #expect(read(Self.ftpReplies(size: "550 No such file or directory.")) == nil)
        // No TYPE reply (a reused connection): still the reply before the 1xx.
        #expect(read(["213 20231114221320", "213 77", "125 Data connection already open."]) == 77)
        // A continuation line is not a reply's end; lines after the 1xx change nothing.
        #expect(read(["213 77", "213-note", "125 Transfer starting.", "213 99", "150 again"]) == 77)
        #expect(read(["213 -5", "150 go"]) == nil)
        #expect(read(["213 12"]) == nil)  // no RETR reply yet
    }

    @Test func ftpSizeCommandNamesTheLastSegmentDecoded() {
        #expect(SourceProtocol.ftp.sizeCommand(url: "ftp://u:p@127.0.0.1:21/sub/a%20b.bin") == "*SIZE a b.bin")
        #expect(SourceProtocol.ftps.sizeCommand(url: "ftps://127.0.0.1/f.bin;type=i") == "*SIZE f.bin")
        #expect(SourceProtocol.ftp.sizeCommand(url: "ftp://127.0.0.1/dir/") == nil)
        #expect(SourceProtocol.ftp.sizeCommand(url: "ftp://127.0.0.1/a%0D%0ADELE%20b") == nil)
        #expect(SourceProtocol.ftp.sizeCommand(url: "ftp://127.0.0.1/a%0Ab") == nil)
        #expect(SourceProtocol.ftp.sizeCommand(url: "ftp://127.0.0.1/a%00b") == nil)
        #expect(SourceProtocol.ftp.sizeCommand(url: "ftp://127.0.0.1/%FF") == nil)
        #expect(SourceProtocol.sftp.sizeCommand(url: "sftp://127.0.0.1/f.bin") == nil)
        #expect(SourceProtocol.http.sizeCommand(url: "http://127.0.0.1/f.bin") == nil)
    }

    @Test func anFTPServerSendingMoreThanItsSizeFailsNamingBothSizesAndNothingPastItIsWritten() {
        var understated = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "213 1000") { #expect(understated.read(headerLine: line, now: Self.now) == nil) }
        // libcurl knows no size (it skipped its own SIZE): the reply to Ferry's is the size.
        #expect(understated.judgeBeforeBody(report: .init(remaining: nil, modified: Self.mtime), now: Self.now)
                == .accept(offset: 0, total: 1_000, discarding: nil))
        // Up to the size: written. A chunk crossing it is not written at all, nor anything after; all is counted.
        #expect(Self.feed(&understated, [600, 300, 200, 50], segmentEnd: 1_000)
                == [.write(offset: 0, count: 600, last: false), .write(offset: 600, count: 300, last: false), .excess(count: 200), .excess(count: 50)])
        #expect(understated.position == 900)
        #expect(understated.excessBytes == 250)
        #expect(understated.ended(code: Self.ok, detail: "", segmentEnd: 1_000)
                == .failed(.sizeUnderstated(reported: 1_000, sent: 1_150, complete: true)))
        // Cut off after the size was passed: "at least".
        #expect(understated.ended(code: Self.reset, detail: "", segmentEnd: 1_000)
                == .failed(.sizeUnderstated(reported: 1_000, sent: 1_150, complete: false)))

        // Far past the size: the exchange stops once the excess passes the limit.
        var huge = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "213 0") { _ = huge.read(headerLine: line, now: Self.now) }
        #expect(huge.judgeBeforeBody(report: .init(), now: Self.now) == .accept(offset: 0, total: 0, discarding: nil))
        let limit = Int(Exchange.excessReadLimit)
        #expect(Self.feed(&huge, [limit, 1], segmentEnd: 0)
                == [.excess(count: limit), .fail(.sizeUnderstated(reported: 0, sent: Int64(limit) + 1, complete: false))])
        #expect(huge.ended(code: Int32(CURLE_WRITE_ERROR.rawValue), detail: "", segmentEnd: 0)
                == .failed(.sizeUnderstated(reported: 0, sent: Int64(limit) + 1, complete: false)))
    }

    @Test func withTheQuotedSizeAnHonestFileEndsReceivedAndAShortOneFailsAlthoughLibcurlSaysOK() {
        var honest = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "213 1000") { _ = honest.read(headerLine: line, now: Self.now) }
        #expect(honest.judgeBeforeBody(report: .init(), now: Self.now) == .accept(offset: 0, total: 1_000, discarding: nil))
        #expect(Self.feed(&honest, [1_000], segmentEnd: 1_000) == [.write(offset: 0, count: 1_000, last: false)])
        #expect(honest.ended(code: Self.ok, detail: "", segmentEnd: 1_000) == .received)

        // The data ends early and libcurl, reading to the connection's end, says OK.
        var short = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "213 1000") { _ = short.read(headerLine: line, now: Self.now) }
        _ = short.judgeBeforeBody(report: .init(), now: Self.now)
        _ = Self.feed(&short, [600], segmentEnd: 1_000)
        #expect(short.ended(code: Self.ok, detail: "", segmentEnd: 1_000)
                == .failed(.unusableResponse("the server said the file has 1000 bytes, but its data ended at 600")))

        // No data at all after a size of 1000: judged by that size, not taken for an empty file.
        var empty = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "213 1000") { _ = empty.read(headerLine: line, now: Self.now) }
        #expect(empty.judgeAtEnd(code: Self.ok, report: .init()) == .accept(offset: 0, total: 1_000, discarding: nil))
        #expect(empty.ended(code: Self.ok, detail: "", segmentEnd: 1_000)
                == .failed(.unusableResponse("the server said the file has 1000 bytes, but its data ended at 0")))
        // A truly empty file, and a server that refused SIZE (nothing to judge by: the file ends where its data did).
        var zero = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "213 0") { _ = zero.read(headerLine: line, now: Self.now) }
        #expect(zero.judgeAtEnd(code: Self.ok, report: .init()) == .accept(offset: 0, total: 0, discarding: nil))
        #expect(zero.ended(code: Self.ok, detail: "", segmentEnd: 0) == .received)
        var refused = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset, quotedSize: true)
        for line in Self.ftpReplies(size: "550 No.") { _ = refused.read(headerLine: line, now: Self.now) }
        #expect(refused.judgeBeforeBody(report: .init(), now: Self.now) == .accept(offset: 0, total: nil, discarding: nil))
        #expect(Self.feed(&refused, [700], segmentEnd: SegmentTable.openEnd) == [.write(offset: 0, count: 700, last: false)])
        #expect(refused.ended(code: Self.ok, detail: "", segmentEnd: SegmentTable.openEnd) == .received)
    }

    @Test func withoutTheQuotedSizeLibcurlsSizeRulesAsBefore() {
        // A resume (REST): libcurl's own SIZE; a 213 among the replies is never read as one.
        var resumed = Exchange(.rest(from: 400), known: Self.knownByOffset, dialect: .byteOffset)
        for line in Self.ftpReplies(size: "213 5") { _ = resumed.read(headerLine: line, now: Self.now) }
        #expect(resumed.judgeBeforeBody(report: .init(remaining: 600, modified: Self.mtime), now: Self.now)
                == .accept(offset: 400, total: 1_000, discarding: nil))
        #expect(Self.feed(&resumed, [600], segmentEnd: 1_000) == [.write(offset: 400, count: 600, last: false)])
        #expect(resumed.ended(code: Self.ok, detail: "", segmentEnd: 1_000) == .received)
        // An empty answer with OK still means "complete at the offset".
        var complete = Exchange(.rest(from: 1_000), known: Self.knownByOffset, dialect: .byteOffset)
        #expect(complete.judgeAtEnd(code: Self.ok, report: .init(remaining: 0, modified: nil)) == .complete(total: 1_000))
    }

    @Test func anFTPFileOverTheLimitIsRefusedBeforeAnyByteAndARejectedHostKeyWins() {
        var large = Exchange(.rest(from: 0), known: .init(total: nil, etag: nil, lastModified: nil, maxFileSize: 500), dialect: .byteOffset)
        #expect(large.judgeBeforeBody(report: .init(remaining: 1_000, modified: nil), now: Self.now) == .tooLarge(total: 1_000, limit: 500))

        var sftp = Exchange(.rest(from: 0), known: .init(), dialect: .byteOffset)
        sftp.abort(.hostKeyRejected("unknown key"))
        #expect(sftp.ended(code: Int32(CURLE_PEER_FAILED_VERIFICATION.rawValue), detail: "", segmentEnd: SegmentTable.openEnd)
                == .failed(.hostKeyRejected("unknown key")))
    }
}
