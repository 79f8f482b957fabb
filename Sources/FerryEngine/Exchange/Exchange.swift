import CCurl
import Foundation

/// One exchange of one connection, as a pure state machine: it reads the response head (or, from an FTP or SFTP
/// server, the size and time libcurl reports), judges it against what is known of the file, says what to do with
/// each body chunk, and says how the exchange ended.
///
/// Events in: header lines (`read(headerLine:now:)`), the server's report before the first body byte or at the
/// end of an exchange that had none (`judgeBeforeBody(report:now:)`, `judgeAtEnd(code:report:)`), body chunks
/// (`step(forBody:…)` then `take(_:)`), the refused address or an abort from the driver (`refuse(_:)`,
/// `abort(_:)`), and the end (`ended(…)`). Actions out:
/// `HeadVerdict`, `BodyStep`, `ExchangeEnd`. No I/O and no clock (the time is passed in), so every rule is
/// unit-tested without sockets (`ExchangeTests`); `DownloadEngine+Fetches` carries the actions out with libcurl
/// and the writer. Every kind of request goes through it: the first request of a download (the rest of the file
/// from an offset), a segment, and the request after a retry.
///
/// The rule it keeps: bytes are never spliced across versions of a file. A body is written after the bytes on
/// disk only when the origin confirms that it continues the same representation (`ResumeDecision` for the rest
/// of a file, `SegmentResponse` for a segment; `ResumeDecision.decideByOffset` for a server that resumes by offset).
struct Exchange: Sendable {
    /// How the server describes the file.
    enum Dialect: Equatable, Sendable {
        /// An HTTP response head (status, `Content-Range`, validators), read from libcurl's header lines.
        case http
        /// FTP or SFTP: no status and no head (libcurl's header lines are the FTP control replies, not read). The
        /// request is the rest of the file from an offset (`CURLOPT_RESUME_FROM_LARGE`); what libcurl learnt of
        /// the file (`ServerReport`) is judged before the first body byte, or at the end of an exchange that had
        /// none (a file already complete, or empty).
        case byteOffset
    }

    /// What an FTP or SFTP server said of the file, as libcurl reports it.
    struct ServerReport: Equatable, Sendable {
        /// The bytes the server will send from the offset asked for (`CURLINFO_CONTENT_LENGTH_DOWNLOAD_T`: its
        /// `SIZE`, or SFTP's stat, less the offset); nil when it gave none.
        var remaining: Int64?
        /// The file's modification time (`CURLINFO_FILETIME_T`, from FTP's `MDTM` or SFTP's stat) as an HTTP
        /// date, the validator recorded with the bytes on disk; nil when it gave none.
        var modified: String?
    }

    /// What was asked for.
    enum Request: Equatable, Sendable {
        /// The rest of the file from `offset` (`Range: bytes=N-` with `If-Range` when N > 0, nothing at 0).
        case rest(from: Int64)
        /// The bytes of a segment, `[a, b)` (`Range: bytes=a-(b-1)` with `If-Range`); the file's size is known.
        case range(Range<Int64>)
    }

    /// What was known of the file when the request was sent; the response is judged against it.
    struct Known: Equatable, Sendable {
        var total: Int64?
        var etag: String?
        var lastModified: String?
        var maxFileSize: Int64?
    }

    let request: Request
    let known: Known
    let dialect: Dialect
    /// The server's report the verdict was judged from (`byteOffset` only).
    private(set) var report: ServerReport?
    /// The next byte of the file this exchange delivers.
    private(set) var position: Int64
    private var reader = ResponseHeadReader()
    /// The judgement of the final head; nil until it was read.
    private(set) var verdict: HeadVerdict?
    /// Why the exchange was stopped from outside (a refused address, the quota, a limit); the first one wins.
    private var stopCause: FailureCause?
    /// The segment's end was reached and the exchange cut there on purpose.
    private var cutAtEnd = false
    /// FTP from byte 0: Ferry asked `SIZE` itself and libcurl reads until the data connection closes
    /// (`SourceProtocol.sizeCommand`); the reply is read from the control replies. Nil otherwise.
    private var quotedSize: QuotedSizeReply?
    /// Bytes received past the size the server reported (`BodyStep.excess`), never written.
    private(set) var excessBytes: Int64 = 0

    /// The most bytes past a reported size that are read (and dropped) to tell how long the file really is; past
    /// that the exchange stops and the failure says "at least".
    static let excessReadLimit: Int64 = 16 << 20

    /// - Parameter quotedSize: the request asked the FTP server's `SIZE` itself (a `CURLOPT_PREQUOTE`) and lets
    ///   libcurl read past it (`CURLOPT_IGNORE_CONTENT_LENGTH`): the size is read from the control replies, and
    ///   data past it is counted as the server's error rather than cut.
    init(_ request: Request, known: Known, dialect: Dialect = .http, quotedSize: Bool = false) {
        self.request = request
        self.known = known
        self.dialect = dialect
        if quotedSize, dialect == .byteOffset { self.quotedSize = QuotedSizeReply() }
        switch request {
        case .rest(let offset): position = offset
        case .range(let range): position = range.lowerBound
        }
    }

    /// The head read so far (the final one once read).
    var head: ResponseHead? { reader.head }

    /// The first byte asked for.
    var firstByte: Int64 {
        switch request {
        case .rest(let offset): return offset
        case .range(let range): return range.lowerBound
        }
    }

    /// The response was judged usable: its body is written.
    var isAccepted: Bool {
        if case .accept = verdict { return true }
        return false
    }

    // MARK: events

    /// Feeds one header line; returns the verdict when this line ends the final response's head. For FTP the
    /// lines are control replies: only the reply to Ferry's own `SIZE` is read from them (`quotedSize`).
    mutating func read(headerLine line: String, now: Date) -> HeadVerdict? {
        if dialect == .byteOffset, verdict == nil { quotedSize?.read(line) }
        guard dialect == .http, verdict == nil, let head = reader.read(line) else { return nil }
        return judge(head, now: now)
    }

    /// Judges the answer when the first body byte arrives before any verdict: for HTTP a head that never got its
    /// end (a response without a header block end, HTTP/0.9-like; nil when there is no head at all), for FTP and
    /// SFTP the server's `report`.
    mutating func judgeBeforeBody(report: ServerReport, now: Date) -> HeadVerdict? {
        guard verdict == nil else { return nil }
        switch dialect {
        case .http:
            guard let head = reader.head else { return nil }
            return judge(head, now: now)
        case .byteOffset:
            let report = withQuotedSize(report)
            return judge(report, total: report.remaining.map { firstByte + $0 })
        }
    }

    /// libcurl knows no size when it skipped its own `SIZE` (`quotedSize`): the reply to Ferry's is the size.
    private func withQuotedSize(_ report: ServerReport) -> ServerReport {
        guard let quotedSize else { return report }
        var report = report
        report.remaining = quotedSize.size.map { max(0, $0 - firstByte) }
        return report
    }

    /// Judges an FTP or SFTP exchange that ended with libcurl's `code` before any body byte: with `CURLE_OK`, the
    /// server confirmed that nothing follows the offset (the file is complete, or empty), so its size is the
    /// offset; with `CURLE_PARTIAL_FILE` it reported a size and then sent nothing, judged like a first byte (so
    /// the end says what the server claimed). With `quotedSize`, libcurl checked no size, so `CURLE_OK` is judged
    /// like a first byte too. Nil for HTTP, for other codes, and once a verdict exists.
    mutating func judgeAtEnd(code: Int32, report: ServerReport) -> HeadVerdict? {
        guard dialect == .byteOffset, verdict == nil else { return nil }
        let report = withQuotedSize(report)
        switch code {
        case Int32(CURLE_OK.rawValue) where quotedSize != nil:
            // libcurl read until the data connection closed without knowing the size: the server's own word is
            // judged, so a size it did not keep shows in the end ("its data ended at").
            return judge(report, total: firstByte + (report.remaining ?? 0))
        case Int32(CURLE_OK.rawValue): return judge(report, total: firstByte)
        case Int32(CURLE_PARTIAL_FILE.rawValue): return judge(report, total: report.remaining.map { firstByte + $0 })
        default: return nil
        }
    }

    /// What to do with a body chunk of `count` bytes, given where the connection's segment ends now (it moves
    /// when another connection takes over the tail) and the most bytes the file may reach. Changes nothing: the
    /// driver may still pause the chunk (back-pressure, speed limits) and `take`s the step when it acts on it.
    func step(forBody count: Int, segmentEnd: Int64, ceiling: ByteCeiling?) -> BodyStep {
        if let stopCause { return .fail(stopCause) }
        switch verdict {
        case .accept: break
        case .complete, .httpError: return .discard
        case .restart, .tooLarge, nil: return .fail(.internalError("a body without a usable response head"))
        }
        // FTP from byte 0 reads until the data connection closes: bytes past the reported size mean the size was
        // wrong, never a cut. None of them is written; they are counted (up to a limit) to name the real size.
        if quotedSize != nil, case .accept(_, let total?, _) = verdict, excessBytes > 0 || position + Int64(count) > total {
            let sent = position + excessBytes + Int64(count)
            if excessBytes + Int64(count) > Self.excessReadLimit {
                return .fail(.sizeUnderstated(reported: total, sent: sent, complete: false))
            }
            return .excess(count: count)
        }
        let room = segmentEnd - position
        guard room > 0 else { return .cut }
        let taken = Int(min(Int64(count), room))
        if let ceiling, position + Int64(taken) > ceiling.bytes { return .fail(ceiling.failure) }
        let end = position + Int64(taken)
        let last = end == segmentEnd && (end < requestEnd || taken < count)
        return .write(offset: position, count: taken, last: last)
    }

    /// Records a body step the driver carried out.
    mutating func take(_ step: BodyStep) {
        switch step {
        case .write(_, let count, let last):
            position += Int64(count)
            if last { cutAtEnd = true }
        case .cut:
            cutAtEnd = true
        case .fail(let cause):
            abort(cause)
        case .excess(let count):
            excessBytes += Int64(count)
        case .discard:
            break
        }
    }

    /// The address libcurl was about to connect to was refused (the destination guard).
    mutating func refuse(_ reason: String) { abort(.forbiddenDestination(reason)) }

    /// Stops the exchange for `cause` (the driver then has libcurl abort it); the first cause wins.
    mutating func abort(_ cause: FailureCause) {
        if stopCause == nil { stopCause = cause }
    }

    /// How the exchange ended, from libcurl's result `code` (and its message). `segmentEnd` is where the
    /// connection's segment ends now; nil when it no longer exists (the file turned out to end before it).
    func ended(code: Int32, detail: String, segmentEnd: Int64?) -> ExchangeEnd {
        if cutAtEnd { return .received }
        if case .restart(let reason, let single) = verdict { return .restart(reason: reason, singleConnection: single) }
        if code == Int32(CURLE_RANGE_ERROR.rawValue) {
            return .restart(reason: "the origin did not honour the range request", singleConnection: false)
        }
        if dialect == .byteOffset, code == Int32(CURLE_BAD_DOWNLOAD_RESUME.rawValue), stopCause == nil {
            return .restart(reason: "the file on the server is smaller than the bytes on disk", singleConnection: false)
        }
        if let stopCause { return .failed(stopCause) }
        if excessBytes > 0, case .accept(_, let total?, _) = verdict {
            return .failed(.sizeUnderstated(reported: total, sent: position + excessBytes, complete: code == Int32(CURLE_OK.rawValue)))
        }
        // The data ended before the reported size: libcurl says so (`CURLE_PARTIAL_FILE`) when it knew the size,
        // and returns OK when it read until the data connection closed (`quotedSize`).
        if dialect == .byteOffset, case .accept(_, let total?, _) = verdict,
           code == Int32(CURLE_PARTIAL_FILE.rawValue) || (quotedSize != nil && code == Int32(CURLE_OK.rawValue) && position < total) {
            return .failed(.unusableResponse("the server said the file has \(total) bytes, but its data ended at \(position)"))
        }
        switch verdict {
        case .tooLarge(let total, let limit):
            return .failed(.tooLarge("the file has \(total) bytes, more than the limit of \(limit)"))
        case .httpError(let status, let retryAfter):
            return .failed(.httpStatus(status, retryAfter: retryAfter))
        default:
            break
        }
        if code != Int32(CURLE_OK.rawValue) { return .failed(.curl(code: code, detail: detail)) }
        switch verdict {
        case nil:
            return .failed(.internalError("the origin's answer ended before its headers"))
        case .complete:
            return .received
        default:
            guard let segmentEnd, segmentEnd != SegmentTable.openEnd, position < segmentEnd else { return .received }
            return .failed(.unusableResponse("the answer for bytes \(firstByte)-\(segmentEnd - 1) ended at \(position)"))
        }
    }

    // MARK: judging

    /// One past the last byte the response can deliver: the range's end, the file's size, or open.
    private var requestEnd: Int64 {
        switch request {
        case .range(let range): return range.upperBound
        case .rest:
            if case .accept(_, let total?, _) = verdict { return total }
            return SegmentTable.openEnd
        }
    }

    private mutating func judge(_ head: ResponseHead, now: Date) -> HeadVerdict {
        let verdict: HeadVerdict
        switch request {
        case .rest(let offset):
            verdict = Self.verdict(ResumeDecision.decide(
                requestedOffset: offset, knownTotal: offset > 0 ? known.total : nil, status: head.status,
                contentRange: head.contentRange, contentLength: head.contentLength, maxFileSize: known.maxFileSize),
                offset: offset, head: head, now: now)
        case .range(let range):
            verdict = Self.verdict(SegmentResponse.judge(
                requested: range, total: known.total ?? range.upperBound, etag: known.etag,
                lastModified: known.lastModified, head: head), range: range, total: known.total, head: head, now: now)
        }
        if case .accept(let offset, _, _) = verdict { position = offset }
        self.verdict = verdict
        return verdict
    }

    private mutating func judge(_ report: ServerReport, total: Int64?) -> HeadVerdict {
        let offset = firstByte
        let decision = ResumeDecision.decideByOffset(
            requestedOffset: offset, knownTotal: known.total, knownModified: known.lastModified, reportedTotal: total,
            reportedModified: report.modified, maxFileSize: known.maxFileSize)
        let verdict: HeadVerdict
        switch decision {
        case .append(let at, let total): verdict = .accept(offset: at, total: total, discarding: nil)
        case .complete: verdict = .complete(total: offset)
        case .restart(let reason): verdict = .restart(reason: reason, singleConnection: false)
        case .tooLarge(let total, let limit): verdict = .tooLarge(total: total, limit: limit)
        case .replace(let total, let reason): verdict = .accept(offset: 0, total: total, discarding: reason)
        case .httpError(let status): verdict = .httpError(status: status, retryAfter: nil)
        }
        self.report = report
        self.verdict = verdict
        return verdict
    }

    private static func verdict(_ decision: ResumeDecision, offset: Int64, head: ResponseHead, now: Date) -> HeadVerdict {
        switch decision {
        case .append(let at, let total): return .accept(offset: at, total: total, discarding: nil)
        case .replace(let total, let reason): return .accept(offset: 0, total: total, discarding: reason)
        case .complete: return .complete(total: offset)
        case .restart(let reason): return .restart(reason: reason, singleConnection: false)
        case .httpError(let status): return .httpError(status: status, retryAfter: head.retryAfter(now: now))
        case .tooLarge(let total, let limit): return .tooLarge(total: total, limit: limit)
        }
    }

    private static func verdict(_ response: SegmentResponse, range: Range<Int64>, total: Int64?, head: ResponseHead, now: Date) -> HeadVerdict {
        switch response {
        case .accept: return .accept(offset: range.lowerBound, total: total, discarding: nil)
        case .changed(let reason): return .restart(reason: reason, singleConnection: false)
        case .rangesIgnored(let reason): return .restart(reason: reason, singleConnection: true)
        case .httpError(let status): return .httpError(status: status, retryAfter: head.retryAfter(now: now))
        }
    }
}
