import FerryCore
import Testing
@testable import FerryService

@Suite("Fetch-through: the prefixed URL")
struct FetchTargetTests {
    private func parse(_ path: String, _ query: String? = nil) throws(URLProblem) -> SubmittedURL {
        try FetchTarget.parse(rawPath: path, query: query)
    }

    private func problem(_ path: String, _ query: String? = nil) -> URLProblem? {
        do { _ = try parse(path, query); return nil } catch { return error }
    }

    @Test func theOriginURLIsThePathAfterThePrefix() throws {
        #expect(try parse("/fetch/https/files.example.org/packages/a/b-1.0.whl").normalized
                == "https://files.example.org/packages/a/b-1.0.whl")
        #expect(try parse("/fetch/http/127.0.0.1:8081/simple/demo/", "x=1&y=%20").normalized
                == "http://127.0.0.1:8081/simple/demo/?x=1&y=%20")
        #expect(try parse("/fetch/HTTPS/Example.ORG/").normalized == "https://example.org/")
        // pip encodes the port's colon when it resolves a relative link.
        #expect(try parse("/fetch/http/127.0.0.1%3A8081/p/x.whl").normalized == "http://127.0.0.1:8081/p/x.whl")
        #expect(try parse("/fetch/http/%5B::1%5D%3a8081/x").normalized == "http://[::1]:8081/x")
        #expect(try parse("/fetch/http/example.org").normalized == "http://example.org/")
        // The default port is dropped, as for any URL; percent-encoded characters other than separators stay.
        #expect(try parse("/fetch/https/example.org:443/a%20b").normalized == "https://example.org/a%20b")
    }

    @Test func hostsAreReadAsWHATWGReadsThem() throws {
        #expect(try parse("/fetch/http/127.1/x").host == .ipv4(IPAddress("127.0.0.1")!))
        #expect(try parse("/fetch/http/0x7f000001/x").host == .ipv4(IPAddress("127.0.0.1")!))
        #expect(try parse("/fetch/http/[::1]:9000/x").normalized == "http://[::1]:9000/x")
        #expect(try parse("/fetch/http/xn--bcher-kva.example/x").host == .domain("xn--bcher-kva.example"))
    }

    @Test func onlyHTTPAndHTTPS() {
        #expect(problem("/fetch/ftp/example.org/x") == .unsupportedScheme("ftp"))
        #expect(problem("/fetch/file/etc/passwd") == .unsupportedScheme("file"))
        #expect(problem("/fetch/gopher/example.org/x") == .unsupportedScheme("gopher"))
    }

    @Test func refusesWhatCouldSteerTheRequestElsewhere() {
        let refused = [
            "/fetch/http/user:pass@example.org/x",             // userinfo
            "/fetch/http/example.org@evil.test/x",
            "/fetch/http/%65vil.test/x",                       // encoded host
            "/fetch/http/example.org/a%2Fb",                   // encoded slash
            "/fetch/http/example.org/a%2fb",
            "/fetch/http/example.org/a%5Cb",                   // encoded backslash
            "/fetch/http/example.org/%2e%2e/secret",           // encoded dots
            "/fetch/http/example.org/a/../secret",             // dot segments
            "/fetch/http/example.org/..",
            "/fetch/http/example.org/./x",
            "/fetch/http/example.org/a\\b",                    // backslash
            "/fetch/http/example.org:99999/x",                 // port out of range
            "/fetch/http/example.org:12ab/x",                  // not a port
            "/fetch/http//x",                                  // no host
            "/fetch/http",                                     // no host at all
            "/fetch//example.org/x",                           // no scheme
        ]
        for path in refused {
            guard case .invalid = problem(path) else {
                Issue.record("\(path) should be refused as invalid, was \(String(describing: problem(path)))")
                continue
            }
        }
        #expect(problem("/fetch/http/example.org/x", "a=\u{0A}b") != nil)
    }

    @Test func dotsInsideNamesAreNotSegments() throws {
        #expect(try parse("/fetch/http/example.org/a..b/.hidden/c.tar.gz").normalized == "http://example.org/a..b/.hidden/c.tar.gz")
    }
}

@Suite("Fetch-through: the allow-list")
struct FetchAllowListTests {
    private func url(_ text: String) -> SubmittedURL { try! SubmittedURL.parse(text) }

    @Test func hostsWildcardsPortsAndEverything() throws {
        let list = try FetchAllowList(parsing: "files.pythonhosted.org, *.debian.org,127.0.0.1:8081")
        #expect(list.allows(url("https://files.pythonhosted.org/x")))
        #expect(list.allows(url("http://files.pythonhosted.org/x")))
        #expect(!list.allows(url("https://files.pythonhosted.org:8443/x")))
        #expect(!list.allows(url("https://pythonhosted.org/x")))
        #expect(list.allows(url("http://deb.debian.org/debian/")))
        #expect(list.allows(url("http://a.b.debian.org/")))
        #expect(!list.allows(url("http://debian.org/")))
        #expect(!list.allows(url("http://evildebian.org/")))
        #expect(list.allows(url("http://127.0.0.1:8081/x")))
        #expect(list.allows(url("http://127.1:8081/x")))
        #expect(!list.allows(url("http://127.0.0.1/x")))
        #expect(!list.allows(url("http://127.0.0.1:8082/x")))
        let all = try FetchAllowList(parsing: "*")
        #expect(all.allows(url("http://anything.test:1234/x")))
        #expect(FetchAllowList().isEmpty)
        #expect(try FetchAllowList(parsing: " , ").isEmpty)
    }

    @Test func aPortPatternMeansThePortConnectedTo() throws {
        let list = try FetchAllowList(parsing: "example.org:443,Bücher.example")
        #expect(list.allows(url("https://example.org/x")))
        #expect(!list.allows(url("http://example.org/x")))
        #expect(list.allows(url("https://xn--bcher-kva.example/x")))
    }

    @Test func refusesPatternsThatAreNotHosts() {
        for bad in ["*.", "a*.org", "http://x.org", "x.org/path", "user@x.org", "x.org:99999", "**", "*.*.org"] {
            #expect(throws: FetchAllowList.InvalidPattern.self, "\(bad)") { try FetchAllowList(parsing: bad) }
        }
    }
}

@Suite("Fetch-through: the cache key")
struct CacheKeyRuleTests {
    private func url(_ text: String) -> SubmittedURL { try! SubmittedURL.parse(text) }

    @Test func presigningParametersAndIgnoredNamesAreLeftOut() {
        let signed = url("https://b.s3.example/k.tar?X-Amz-Date=1&v=2&X-Amz-Signature=abc&token=t1")
        #expect(CacheKeyRule.standard.key(for: signed) == "https://b.s3.example/k.tar?v=2&token=t1")
        let rule = CacheKeyRule(ignoring: ["Token"])
        #expect(rule.key(for: signed) == "https://b.s3.example/k.tar?v=2")
        #expect(rule.key(for: url("https://b.s3.example/k.tar?TOKEN=9")) == "https://b.s3.example/k.tar")
        #expect(rule.key(for: url("https://b.s3.example/k.tar")) == "https://b.s3.example/k.tar")
    }

    @Test func jobDedupeUsesTheSameRule() throws {
        var body = JobDraft.Body()
        body.url = "https://example.org/f.iso?session=1&Signature=x"
        var first = try JobDraft.validate(body, destinations: AddressPolicy())
        body.url = "https://example.org/f.iso?session=2"
        var second = try JobDraft.validate(body, destinations: AddressPolicy())
        #expect(first.dedupeKey != second.dedupeKey)
        first.keyRule = CacheKeyRule(ignoring: ["session"])
        second.keyRule = CacheKeyRule(ignoring: ["session"])
        #expect(first.dedupeKey == second.dedupeKey)
        #expect(first.dedupeKey == CacheKeyRule(ignoring: ["session"]).key(for: first.url))
    }

    @Test func namesTheFlagAccepts() {
        #expect(CacheKeyRule.isValidName("token"))
        #expect(!CacheKeyRule.isValidName(""))
        #expect(!CacheKeyRule.isValidName("a=b"))
        #expect(!CacheKeyRule.isValidName("a b"))
    }
}
