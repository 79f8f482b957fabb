import Foundation
import Testing
@testable import FerryHTTP

@Suite struct EntityTagTests {
    @Test func parses() {
        #expect(EntityTag.parse("\"abc\"") == EntityTag(value: "abc"))
        #expect(EntityTag.parse("W/\"abc\"") == EntityTag(value: "abc", isWeak: true))
        #expect(EntityTag.parse("\"\"") == EntityTag(value: ""))
        #expect(EntityTag.parse("abc") == nil)
        #expect(EntityTag.parse("\"a\"b") == nil)
        #expect(EntityTag.parse("\"a b\"") == nil)
        #expect(EntityTag.parse("w/\"a\"") == nil)
    }

    @Test func parsesLists() {
        #expect(EntityTag.parseList("*") == nil)
        #expect(EntityTag.parseList("\"a\", W/\"b\" ,\"c\"") == [EntityTag(value: "a"), EntityTag(value: "b", isWeak: true), EntityTag(value: "c")])
        #expect(EntityTag.parseList("\"a\" junk") == [])
        #expect(EntityTag.parseList("") == [])
    }

    @Test func comparisons() {
        let strong = EntityTag(value: "x")
        let weak = EntityTag(value: "x", isWeak: true)
        #expect(strong.strongMatch(strong))
        #expect(!strong.strongMatch(weak))
        #expect(!weak.strongMatch(weak))
        #expect(weak.weakMatch(strong))
        #expect(!strong.weakMatch(EntityTag(value: "y")))
        #expect(weak.headerValue == "W/\"x\"")
        #expect(EntityTag.header("*", matches: strong, weak: false))
        #expect(EntityTag.header("W/\"x\"", matches: strong, weak: true))
        #expect(!EntityTag.header("W/\"x\"", matches: strong, weak: false))
    }
}

@Suite struct RangeRequestTests {
    @Test func singleRanges() {
        #expect(RangeRequest.parse("bytes=0-99", length: 1000) == .satisfiable([0...99]))
        #expect(RangeRequest.parse("bytes=500-", length: 1000) == .satisfiable([500...999]))
        #expect(RangeRequest.parse("bytes=-100", length: 1000) == .satisfiable([900...999]))
        #expect(RangeRequest.parse("bytes=-5000", length: 1000) == .satisfiable([0...999]))
        #expect(RangeRequest.parse("bytes=990-5000", length: 1000) == .satisfiable([990...999]))
        #expect(RangeRequest.parse("Bytes = 0-0", length: 1000) == .satisfiable([0...0]))
    }

    @Test func multipleRanges() {
        #expect(RangeRequest.parse("bytes=0-9, 20-29,-5", length: 100) == .satisfiable([0...9, 20...29, 95...99]))
        // Overlapping or adjacent: sorted and coalesced.
        #expect(RangeRequest.parse("bytes=50-60,0-9,5-20,21-25", length: 100) == .satisfiable([0...25, 50...60]))
        // Unsatisfiable specs among satisfiable ones are dropped.
        #expect(RangeRequest.parse("bytes=0-9,5000-", length: 100) == .satisfiable([0...9]))
    }

    @Test func unsatisfiable() {
        #expect(RangeRequest.parse("bytes=1000-", length: 1000) == .unsatisfiable)
        #expect(RangeRequest.parse("bytes=-0", length: 1000) == .unsatisfiable)
        #expect(RangeRequest.parse("bytes=0-", length: 0) == .unsatisfiable)
        #expect(RangeRequest.parse("bytes=-10", length: 0) == .unsatisfiable)
    }

    @Test(arguments: ["", "bytes", "bytes=", "items=0-1", "bytes=a-b", "bytes=5-1", "bytes=--1", "bytes=1-2-3",
                      "bytes=0-1,x", "bytes= , ", "bytes=+1-2", "bytes=99999999999999999999-"])
    func ignoredWhenInvalid(_ header: String) {
        #expect(RangeRequest.parse(header, length: 1000) == RangeResult.none)
    }

    @Test func tooManyRangesIgnored() {
        let many = "bytes=" + (0..<65).map { "\($0 * 10)-\($0 * 10 + 1)" }.joined(separator: ",")
        #expect(RangeRequest.parse(many, length: 10_000) == RangeResult.none)
    }
}

@Suite struct MultipartByteRangesTests {
    @Test func lengthMatchesParts() {
        let result = MultipartByteRanges.body(ranges: [0...9, 20...29], total: 100, contentType: "text/plain",
                                              file: "/tmp/x", boundary: "B0UND")
        #expect(result.contentType == "multipart/byteranges; boundary=B0UND")
        #expect(result.length == result.parts.reduce(0) { $0 + $1.length })
        guard case .bytes(let first) = result.parts[0], case .file(let region) = result.parts[1],
              case .bytes(let tail) = result.parts.last! else { Issue.record("unexpected parts"); return }
        #expect(String(decoding: first, as: UTF8.self) == "--B0UND\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-9/100\r\n\r\n")
        #expect(region == FileBody(path: "/tmp/x", offset: 0, length: 10))
        #expect(String(decoding: tail, as: UTF8.self) == "\r\n--B0UND--\r\n")
        #expect(result.parts.count == 5)
    }
}

@Suite struct HTTPMessageTests {
    @Test func headersAreCaseInsensitiveAndOrdered() {
        var headers: HTTPHeaders = ["Content-Type": "a", "X-One": "1"]
        headers.add("x-one", "2")
        #expect(headers["CONTENT-TYPE"] == "a")
        #expect(headers.values("X-ONE") == ["1", "2"])
        headers["X-One"] = "3"
        #expect(headers.values("x-one") == ["3"])
        headers["content-type"] = nil
        #expect(!headers.contains("Content-Type"))
        #expect(headers.count == 1)
    }

    @Test func requestSplitsTargets() {
        let request = HTTPRequest(method: .GET, target: "/a%20b/c%2Fd?x=1&y=a+b%26&z&x=2")
        #expect(request.rawPath == "/a%20b/c%2Fd")
        #expect(request.path == "/a b/c/d")
        #expect(request.query == "x=1&y=a+b%26&z&x=2")
        #expect(request.queryValue("y") == "a b&")
        #expect(request.queryValue("x") == "1")
        #expect(request.queryValue("z") == "")
        #expect(request.queryItems().count == 4)
        let absolute = HTTPRequest(target: "http://host:8080/p/q?r=1")
        #expect(absolute.rawPath == "/p/q")
        #expect(absolute.query == "r=1")
        #expect(HTTPRequest(target: "/").query == nil)
    }

    @Test func errorResponseIsJSON() throws {
        let response = errorResponse(.notFound, code: "not_found", message: "No \"job\"\n here", headers: ["X-A": "b"])
        #expect(response.status == .notFound)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["X-A"] == "b")
        guard case .bytes(let body) = response.body else { Issue.record("no body"); return }
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: [String: String]]
        #expect(object?["error"]?["code"] == "not_found")
        #expect(object?["error"]?["message"] == "No \"job\"\n here")
    }

    @Test func statusEqualityByCode() {
        #expect(HTTPStatus(code: 404) == .notFound)
        #expect(HTTPStatus(code: 404, reason: "Nope") == .notFound)
        #expect(HTTPStatus(code: 499).reason == "Unknown")
        #expect(!HTTPStatus.noContent.allowsBody && !HTTPStatus.notModified.allowsBody && HTTPStatus.ok.allowsBody)
    }
}
