import FerryCore
import Testing
@testable import FerryService

@Suite("Job request validation")
struct JobDraftTests {
    func body(_ url: String?, _ change: (inout JobDraft.Body) -> Void = { _ in }) -> JobDraft.Body {
        var body = JobDraft.Body()
        body.url = url
        change(&body)
        return body
    }

    func code(_ body: JobDraft.Body, allowPrivate: Bool = false) -> APIError.Code? {
        do { _ = try JobDraft.validate(body, destinations: AddressPolicy(allowPrivateNetworks: allowPrivate)); return nil } catch { return error.code }
    }

    @Test func defaultsAndNormalization() throws {
        let draft = try JobDraft.validate(body("HTTP://Example.ORG:80/a%20b?x=1#frag"), destinations: AddressPolicy())
        #expect(draft.url.scheme == "http")
        #expect(draft.priority == 0 && draft.dedupe && !draft.paused && draft.headers.isEmpty)
        #expect(!draft.url.normalized.contains("#frag"))
        #expect(!draft.url.normalized.contains(":80"))
    }

    @Test func dedupeKeyIgnoresHeaderNameCaseAndOrder() throws {
        let a = try JobDraft.validate(body("http://e.org/f") { $0.headers = ["X-A": "1", "x-b": "2"] }, destinations: AddressPolicy())
        let b = try JobDraft.validate(body("http://E.org/f") { $0.headers = ["x-b": "2", "X-a": "1"] }, destinations: AddressPolicy())
        let c = try JobDraft.validate(body("http://e.org/f") { $0.headers = ["X-A": "2"] }, destinations: AddressPolicy())
        #expect(a.dedupeKey == b.dedupeKey)
        #expect(a.dedupeKey != c.dedupeKey)
    }

    @Test func refusals() {
        #expect(code(body(nil)) == .invalidRequest)
        #expect(code(body("nope")) == .invalidURL)
        #expect(code(body("gopher://e.org/")) == .unsupportedScheme)
        #expect(code(body("dict://e.org/")) == .unsupportedScheme)
        #expect(code(body("http://e.org/") { $0.sha256 = String(repeating: "g", count: 64) }) == .invalidRequest)
        #expect(code(body("http://e.org/") { $0.connections = 0 }) == .invalidRequest)
        #expect(code(body("http://e.org/") { $0.priority = 2_000_000 }) == .invalidRequest)
        #expect(code(body("http://e.org/") { $0.headers = ["Bad Name": "x"] }) == .invalidRequest)
        #expect(code(body("http://e.org/") { $0.headers = ["Proxy-Authorization": "x"] }) == .invalidRequest)
        #expect(code(body("http://e.org/") { $0.headers = ["Transfer-Encoding": "chunked"] }) == .invalidRequest)
        #expect(code(body("http://e.org/") { $0.headers = ["X-Nul": "a\u{0}b"] }) == .invalidRequest)
    }

    @Test func literalPrivateAddressesAreRefusedUnlessAllowed() {
        #expect(code(body("http://127.1/")) == .forbiddenDestination)
        #expect(code(body("http://[::ffff:10.0.0.1]/")) == .forbiddenDestination)
        #expect(code(body("http://localhost/")) == .forbiddenDestination)
        #expect(code(body("http://127.1/"), allowPrivate: true) == nil)
        #expect(code(body("http://93.184.216.34/")) == nil)
    }

    @Test func uppercaseDigestIsLowered() throws {
        let draft = try JobDraft.validate(body("http://e.org/") { $0.sha256 = String(repeating: "AB", count: 32) }, destinations: AddressPolicy())
        #expect(draft.expectedSHA256 == String(repeating: "ab", count: 32))
    }
}
