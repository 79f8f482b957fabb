@testable import FerryEngine
import Foundation
import Testing

struct ResponseHeadTests {
    @Test func statusLines() {
        #expect(ResponseHead.status(ofStatusLine: "HTTP/1.1 206 Partial Content\r\n") == 206)
        #expect(ResponseHead.status(ofStatusLine: "HTTP/2 200 \r\n") == 200)
        #expect(ResponseHead.status(ofStatusLine: "HTTP/1.0 404\r\n") == 404)
        #expect(ResponseHead.status(ofStatusLine: "Content-Type: text/plain\r\n") == nil)
        #expect(ResponseHead.status(ofStatusLine: "HTTP/1.1 2000 x\r\n") == nil)
    }

    @Test func fieldsAreCaseInsensitiveAndTheFirstWins() {
        var head = ResponseHead(status: 200)
        head.add(line: "Content-Length: 1234\r\n")
        head.add(line: "ETAG: \"abc\"\r\n")
        head.add(line: "etag: \"other\"\r\n")
        head.add(line: "Content-Disposition: attachment; filename=\"a:b.txt\"\r\n")
        head.add(line: "no colon here\r\n")
        #expect(head.contentLength == 1234)
        #expect(head.etag == "\"abc\"")
        #expect(head.contentDisposition == "attachment; filename=\"a:b.txt\"")
        #expect(head["CONTENT-length"] == "1234")
    }

    @Test func badLengthsAreIgnored() {
        var head = ResponseHead(status: 200)
        head.add(line: "Content-Length: -5\r\n")
        #expect(head.contentLength == nil)
    }

    @Test func redirectsAndInterim() {
        var redirect = ResponseHead(status: 302)
        #expect(!redirect.isFollowedRedirect)
        redirect.add(line: "Location: /x\r\n")
        #expect(redirect.isFollowedRedirect)
        var notModified = ResponseHead(status: 304)
        notModified.add(line: "Location: /x\r\n")
        #expect(!notModified.isFollowedRedirect)
        #expect(ResponseHead(status: 100).isInterim)
        #expect(ResponseHead.isEndOfHeaders("\r\n"))
    }

    @Test func retryAfterSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        var seconds = ResponseHead(status: 503)
        seconds.add(line: "Retry-After: 120\r\n")
        #expect(seconds.retryAfter(now: now) == 120)
        var date = ResponseHead(status: 503)
        date.add(line: "Retry-After: Tue, 14 Nov 2023 22:13:50 GMT\r\n")
        #expect(date.retryAfter(now: now) == 30)
        var past = ResponseHead(status: 503)
        past.add(line: "Retry-After: Tue, 14 Nov 2023 22:00:00 GMT\r\n")
        #expect(past.retryAfter(now: now) == 0)
        var junk = ResponseHead(status: 503)
        junk.add(line: "Retry-After: soon\r\n")
        #expect(junk.retryAfter(now: now) == nil)
    }
}
