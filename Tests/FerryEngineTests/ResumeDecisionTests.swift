@testable import FerryEngine
import Testing

struct ResumeDecisionTests {
    private func decide(offset: Int64 = 0, known: Int64? = nil, status: Int, range: String? = nil, length: Int64? = nil, max: Int64? = nil) -> ResumeDecision {
        ResumeDecision.decide(requestedOffset: offset, knownTotal: known, status: status, contentRange: range, contentLength: length, maxFileSize: max)
    }

    @Test func freshDownloadAcceptsA200WithOrWithoutLength() {
        #expect(decide(status: 200, length: 1000) == .append(offset: 0, total: 1000))
        #expect(decide(status: 200) == .append(offset: 0, total: nil))
        #expect(decide(status: 203, length: 5) == .append(offset: 0, total: 5))
        #expect(decide(status: 204) == .append(offset: 0, total: 0))
    }

    @Test func resumeAcceptsOnlyTheExactRangeWithTheKnownTotal() {
        #expect(decide(offset: 100, known: 1000, status: 206, range: "bytes 100-999/1000") == .append(offset: 100, total: 1000))
        #expect(decide(offset: 100, known: nil, status: 206, range: "bytes 100-999/1000") == .append(offset: 100, total: 1000))
        #expect(decide(offset: 100, known: 1000, status: 206, range: "bytes 100-499/1000") == .append(offset: 100, total: 1000))
        if case .restart = decide(offset: 100, known: 1000, status: 206, range: "bytes 0-999/1000") {} else { Issue.record("wrong start accepted") }
        if case .restart = decide(offset: 100, known: 1000, status: 206, range: "bytes 100-1099/1100") {} else { Issue.record("other total accepted") }
        if case .restart = decide(offset: 100, known: 1000, status: 206, range: "bytes 100-999/*") {} else { Issue.record("unknown total accepted against a known one") }
        if case .restart = decide(offset: 100, known: 1000, status: 206, range: nil) {} else { Issue.record("206 without Content-Range accepted") }
        if case .restart = decide(offset: 100, known: 1000, status: 206, range: "garbage") {} else { Issue.record("bad Content-Range accepted") }
    }

    @Test func unaskedRangeOnlyFromZero() {
        #expect(decide(status: 206, range: "bytes 0-9/10") == .append(offset: 0, total: 10))
        if case .restart = decide(status: 206, range: "bytes 5-9/10") {} else { Issue.record("unasked range accepted") }
    }

    @Test func wholeBodyForARangeRequestReplacesTheBytesOnDisk() {
        guard case .replace(let total, _) = decide(offset: 100, known: 1000, status: 200, length: 1200) else {
            Issue.record("200 for a range request must replace")
            return
        }
        #expect(total == 1200)
    }

    @Test func rangeNotSatisfiableMeansCompleteOnlyWhenSizesMatch() {
        #expect(decide(offset: 1000, known: 1000, status: 416, range: "bytes */1000") == .complete)
        #expect(decide(offset: 1000, known: nil, status: 416, range: "bytes */1000") == .complete)
        if case .restart = decide(offset: 1000, known: 1000, status: 416, range: "bytes */2000") {} else { Issue.record("size mismatch") }
        if case .restart = decide(offset: 1000, known: 900, status: 416, range: "bytes */1000") {} else { Issue.record("known total mismatch") }
        if case .restart = decide(offset: 1000, known: 1000, status: 416) {} else { Issue.record("416 without Content-Range") }
        #expect(decide(status: 416) == .httpError(status: 416))
    }

    @Test func errorsAndOtherStatuses() {
        for status in [301, 304, 400, 403, 404, 408, 429, 500, 503, 100] {
            #expect(decide(status: status) == .httpError(status: status))
            #expect(decide(offset: 10, known: 20, status: status) == .httpError(status: status))
        }
    }

    @Test func sizeLimit() {
        #expect(decide(status: 200, length: 1001, max: 1000) == .tooLarge(total: 1001, limit: 1000))
        #expect(decide(status: 200, length: 1000, max: 1000) == .append(offset: 0, total: 1000))
        #expect(decide(status: 200, max: 1000) == .append(offset: 0, total: nil))
        #expect(decide(offset: 10, known: 5000, status: 206, range: "bytes 10-4999/5000", max: 1000) == .tooLarge(total: 5000, limit: 1000))
        #expect(decide(offset: 10, known: 5000, status: 200, length: 5000, max: 1000) == .tooLarge(total: 5000, limit: 1000))
    }

    @Test func unsatisfiedTotalParsing() {
        #expect(ResumeDecision.unsatisfiedTotal("bytes */1234") == 1234)
        #expect(ResumeDecision.unsatisfiedTotal(" bytes */0") == 0)
        #expect(ResumeDecision.unsatisfiedTotal("bytes 0-1/2") == nil)
        #expect(ResumeDecision.unsatisfiedTotal("bytes */x") == nil)
        #expect(ResumeDecision.unsatisfiedTotal(nil) == nil)
    }

    @Test func byOffsetTheBytesOnDiskContinueOnlyAtTheRecordedSizeAndTime() {
        func decide(_ offset: Int64, known: Int64?, knownTime: String? = nil, reported: Int64?, time: String? = nil, max: Int64? = nil) -> ResumeDecision {
            ResumeDecision.decideByOffset(requestedOffset: offset, knownTotal: known, knownModified: knownTime, reportedTotal: reported,
                                          reportedModified: time, maxFileSize: max)
        }
        #expect(decide(0, known: nil, reported: 10) == .append(offset: 0, total: 10))
        #expect(decide(0, known: 99, reported: nil) == .append(offset: 0, total: nil))
        #expect(decide(4, known: 10, reported: 10) == .append(offset: 4, total: 10))
        #expect(decide(10, known: 10, reported: 10) == .complete)
        #expect(decide(4, known: 10, knownTime: "a", reported: 10, time: "a") == .append(offset: 4, total: 10))
        #expect(decide(4, known: 10, knownTime: "a", reported: 10, time: nil) == .append(offset: 4, total: 10))
        #expect(decide(4, known: 10, knownTime: "a", reported: 10, time: "b") == .restart(reason: "the file's modification time changed from a to b"))
        #expect(decide(4, known: 10, reported: 11) == .restart(reason: "the file's size changed from 10 to 11"))
        #expect(decide(4, known: nil, reported: 10) == .restart(reason: "no size was recorded with the bytes on disk to resume safely"))
        #expect(decide(4, known: 10, reported: nil) == .restart(reason: "the server gave no size to confirm the bytes on disk"))
        #expect(decide(12, known: 10, reported: 10) == .restart(reason: "the partial file is larger than the file"))
        #expect(decide(0, known: nil, reported: 10, max: 5) == .tooLarge(total: 10, limit: 5))
        #expect(decide(4, known: 10, reported: 10, max: 10) == .append(offset: 4, total: 10))
    }
}
