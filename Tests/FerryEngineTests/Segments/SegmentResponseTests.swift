@testable import FerryEngine
import Testing

struct SegmentResponseTests {
    static func head(_ status: Int, _ fields: [String: String]) -> ResponseHead {
        var head = ResponseHead(status: status)
        for (name, value) in fields { head.add(line: "\(name): \(value)\r\n") }
        return head
    }

    static func judge(_ head: ResponseHead, etag: String? = "\"v1\"", lastModified: String? = "Tue, 14 Nov 2023 22:13:20 GMT") -> SegmentResponse {
        SegmentResponse.judge(requested: 100..<200, total: 1_000, etag: etag, lastModified: lastModified, head: head)
    }

    @Test func acceptsExactlyTheRangeAskedFor() {
        #expect(Self.judge(Self.head(206, ["Content-Range": "bytes 100-199/1000", "ETag": "\"v1\""])) == .accept)
        #expect(Self.judge(Self.head(206, ["Content-Range": "bytes 100-199/1000"])) == .accept)
    }

    @Test func anyOtherRangeIsAChange() {
        for range in ["bytes 100-198/1000", "bytes 101-199/1000", "bytes 100-199/1001", "bytes 100-199/*", "bytes 0-999/1000"] {
            guard case .changed = Self.judge(Self.head(206, ["Content-Range": range, "ETag": "\"v1\""])) else {
                Issue.record("\(range) was not a change")
                continue
            }
        }
        guard case .changed = Self.judge(Self.head(206, ["ETag": "\"v1\""])) else {
            Issue.record("206 without Content-Range was not a change")
            return
        }
    }

    @Test func newValidatorsAreAChange() {
        let newETag = Self.judge(Self.head(206, ["Content-Range": "bytes 100-199/1000", "ETag": "\"v2\""]))
        #expect(newETag == .changed(reason: "the ETag changed from \"v1\" to \"v2\""))
        let newDate = Self.judge(Self.head(206, ["Content-Range": "bytes 100-199/1000", "Last-Modified": "Wed, 15 Nov 2023 00:00:00 GMT"]), etag: nil)
        guard case .changed = newDate else {
            Issue.record("a new Last-Modified was not a change: \(newDate)")
            return
        }
    }

    @Test func theWholeFileIsAChangeUnlessTheValidatorsMatch() {
        guard case .changed = Self.judge(Self.head(200, ["ETag": "\"v2\""])) else {
            Issue.record("200 with a new ETag was not a change")
            return
        }
        guard case .changed = Self.judge(Self.head(200, [:])) else {
            Issue.record("200 without validators was not a change")
            return
        }
        guard case .rangesIgnored = Self.judge(Self.head(200, ["ETag": "\"v1\""])) else {
            Issue.record("200 with the same ETag did not mean ranges are ignored")
            return
        }
        guard case .rangesIgnored = Self.judge(Self.head(200, ["Last-Modified": "Tue, 14 Nov 2023 22:13:20 GMT"]), etag: nil) else {
            Issue.record("200 with the same Last-Modified did not mean ranges are ignored")
            return
        }
    }

    @Test func errorsAreErrors() {
        #expect(Self.judge(Self.head(503, [:])) == .httpError(status: 503))
        #expect(Self.judge(Self.head(404, ["ETag": "\"v1\""])) == .httpError(status: 404))
        guard case .changed = Self.judge(Self.head(416, ["Content-Range": "bytes */50"])) else {
            Issue.record("416 was not a change")
            return
        }
    }

    @Test func acceptRangesIsReadAsATokenList() {
        #expect(Self.head(200, ["Accept-Ranges": "bytes"]).acceptsByteRanges)
        #expect(Self.head(200, ["Accept-Ranges": "none, Bytes"]).acceptsByteRanges)
        #expect(!Self.head(200, ["Accept-Ranges": "none"]).acceptsByteRanges)
        #expect(!Self.head(200, [:]).acceptsByteRanges)
    }
}
