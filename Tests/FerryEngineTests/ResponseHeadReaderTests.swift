@testable import FerryEngine
import Testing

@Suite("Reading a response head from header lines")
struct ResponseHeadReaderTests {
    private func read(_ lines: [String]) -> [ResponseHead] {
        var reader = ResponseHeadReader()
        return lines.compactMap { reader.read($0) }
    }

    @Test func theFinalHeadComesOutOnceAtItsEnd() throws {
        let heads = read(["HTTP/1.1 206 Partial Content\r\n", "Content-Range: bytes 5-9/10\r\n", "ETag: \"x\"\r\n", "\r\n"])
        let head = try #require(heads.first)
        #expect(heads.count == 1 && head.status == 206 && head.etag == "\"x\"" && head.contentRange == "bytes 5-9/10")
    }

    @Test func interimHeadsAndFollowedRedirectsAreSkipped() throws {
        let heads = read([
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 302 Found\r\n", "Location: /elsewhere\r\n", "\r\n",
            "HTTP/2 200\r\n", "content-length: 3\r\n", "\r\n",
        ])
        #expect(heads.map(\.status) == [200])
        #expect(heads.first?.contentLength == 3)
    }

    @Test func aRedirectWithoutLocationIsTheFinalAnswer() {
        #expect(read(["HTTP/1.1 301 Moved\r\n", "\r\n"]).map(\.status) == [301])
    }

    @Test func linesBeforeAnyStatusAreIgnored() {
        #expect(read(["X-Stray: 1\r\n", "\r\n"]).isEmpty)
    }
}
