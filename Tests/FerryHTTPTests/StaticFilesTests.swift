import Foundation
import Testing
@testable import FerryHTTP

/// A temp directory removed by `remove()`.
struct TempDirectory {
    let path: String

    init(_ prefix: String) throws {
        var template = Array("\(NSTemporaryDirectory())/\(prefix).XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SocketError("mkdtemp") }
        path = String(cString: made)
    }

    func write(_ relative: String, _ text: String) throws {
        let full = path + "/" + relative
        try FileManager.default.createDirectory(atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: full))
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

@Suite struct StaticFilesTests {
    @Test func servesIndexAndTypes() async throws {
        let dir = try TempDirectory("ferry-static")
        defer { dir.remove() }
        try dir.write("index.html", "<h1>hi</h1>")
        try dir.write("app.js", "x")
        try dir.write("style.css", "y")
        try dir.write("sub/index.html", "sub")
        let files = StaticFiles(root: dir.path)

        let index = try #require(await files.handle(HTTPRequest(target: "/")))
        #expect(index.status == .ok)
        #expect(index.headers["Content-Type"] == "text/html; charset=utf-8")
        guard case .file(let body) = index.body else { Issue.record("expected a file body"); return }
        #expect(body.length == 11)
        #expect(body.path.hasSuffix("/index.html"))
        #expect(index.headers["ETag"] != nil)
        #expect(index.headers["Last-Modified"] != nil)

        #expect(await files.handle(HTTPRequest(target: "/app.js"))?.headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(await files.handle(HTTPRequest(target: "/style.css?v=1"))?.headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(await files.handle(HTTPRequest(target: "/sub/"))?.status == .ok)
        #expect(await files.handle(HTTPRequest(target: "/sub"))?.status == .ok)
        #expect(await files.handle(HTTPRequest(method: .HEAD, target: "/app.js"))?.status == .ok)
        let post = try #require(await files.handle(HTTPRequest(method: .POST, target: "/app.js")))
        #expect(post.status == .methodNotAllowed)
        #expect(post.headers["Allow"] == "GET, HEAD")
        #expect(await files.handle(HTTPRequest(method: .PUT, target: "/"))?.status == .methodNotAllowed)
        #expect(await files.handle(HTTPRequest(method: .POST, target: "/missing.js")) == nil, "no file: the router's 404")
        #expect(await files.handle(HTTPRequest(target: "/missing.js")) == nil)
    }

    @Test func conditionalRequests() async throws {
        let dir = try TempDirectory("ferry-static")
        defer { dir.remove() }
        try dir.write("a.txt", "hello")
        let files = StaticFiles(root: dir.path)
        let first = try #require(await files.handle(HTTPRequest(target: "/a.txt")))
        let etag = try #require(first.headers["ETag"])
        let lastModified = try #require(first.headers["Last-Modified"])

        let byTag = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-None-Match": "\"other\", \(etag)"]))
        #expect(byTag?.status == .notModified)
        #expect(byTag?.headers["ETag"] == etag)
        let byWeakTag = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-None-Match": "W/\(etag)"]))
        #expect(byWeakTag?.status == .notModified)
        let star = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-None-Match": "*"]))
        #expect(star?.status == .notModified)
        let otherTag = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-None-Match": "\"nope\""]))
        #expect(otherTag?.status == .ok)
        let byDate = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-Modified-Since": lastModified]))
        #expect(byDate?.status == .notModified)
        let oldDate = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]))
        #expect(oldDate?.status == .ok)
        // If-None-Match wins over If-Modified-Since.
        let both = await files.handle(HTTPRequest(target: "/a.txt", headers: ["If-None-Match": "\"nope\"", "If-Modified-Since": lastModified]))
        #expect(both?.status == .ok)
    }

    @Test func neverEscapesTheRoot() async throws {
        let outer = try TempDirectory("ferry-outer")
        defer { outer.remove() }
        try outer.write("secret.txt", "secret")
        try outer.write("public/index.html", "ok")
        try outer.write("public-evil/x.txt", "sibling with the root as prefix")
        let root = outer.path + "/public"
        #expect(symlink(outer.path + "/secret.txt", root + "/link.txt") == 0)
        #expect(symlink(outer.path, root + "/dirlink") == 0)
        #expect(symlink("/etc", root + "/etc") == 0)
        let files = StaticFiles(root: root)
        #expect(await files.handle(HTTPRequest(target: "/index.html"))?.status == .ok)

        let attempts = [
            "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/.%2e/secret.txt", "/..%2fsecret.txt",
            "/..%2Fsecret.txt", "/%2e%2e%2fsecret.txt", "/..%5csecret.txt", "/..\\secret.txt", "/%5c..%5csecret.txt",
            "/index.html%00.txt", "/index.html%00", "//etc/passwd", "/link.txt", "/dirlink/secret.txt", "/etc/passwd",
            "/./index.html", "/sub/../../secret.txt", "/../public-evil/x.txt", "/%2e%2e/public-evil/x.txt",
            "/.hidden", "/%c0%ae%c0%ae/secret.txt", "secret.txt", "/%ff",
        ]
        for target in attempts {
            let response = await files.handle(HTTPRequest(target: target))
            #expect(response == nil, "\(target) was served")
        }
    }

    @Test func missingRootServesNothing() async {
        #expect(await StaticFiles(root: "/nonexistent/ferry").handle(HTTPRequest(target: "/")) == nil)
    }
}
