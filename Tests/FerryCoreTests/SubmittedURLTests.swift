import Testing
@testable import FerryCore

@Suite struct SubmittedURLTests {
    private func parse(_ text: String) throws -> SubmittedURL {
        do {
            return try SubmittedURL.parse(text)
        } catch {
            Issue.record("\(text) failed: \(error)")
            throw error
        }
    }

    private func problem(_ text: String) -> URLProblem? {
        do {
            let url = try SubmittedURL.parse(text)
            Issue.record("\(text) parsed as \(url.normalized)")
            return nil
        } catch {
            return error
        }
    }

    // MARK: WHATWG IPv4

    @Test(arguments: ["http://127.1/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/", "http://0x7f.1/",
                      "http://127.0.0.1/", "http://127.0.1/", "http://0x7F.0.0.1/", "http://0X7f.00.0.1/", "http://127.0.0.1./",
                      "http://%31%32%37.0.0.1/", "http://0177.0x0.00000.1/", "http://017700000001/", "http://0x7f.0x0.0x0.0x1/",
                      "http://１２７.０.０.１/", "http://127。0。0。1/"])
    func lenientIPv4FormsMeanLoopback(text: String) throws {
        let url = try parse(text)
        #expect(url.host == .ipv4(IPAddress("127.0.0.1")!))
        #expect(url.normalized == "http://127.0.0.1/")
    }

    @Test(arguments: [("http://0/", "0.0.0.0"), ("http://0x/", "0.0.0.0"), ("http://4294967295/", "255.255.255.255"),
                      ("http://1.2.3/", "1.2.0.3"), ("http://1.65535/", "1.0.255.255"), ("http://1.2.65535/", "1.2.255.255"),
                      ("http://192.168.0x1.010/", "192.168.1.8"), ("http://0xffffffff/", "255.255.255.255")])
    func otherIPv4Forms(text: String, expected: String) {
        #expect((try? SubmittedURL.parse(text))?.host == .ipv4(IPAddress(expected)!))
    }

    @Test(arguments: ["http://4294967296/", "http://1.2.3.256/", "http://256.1.1.1/", "http://1.2.65536/", "http://1.16777216/",
                      "http://1.2.3.4.5/", "http://0x100000000/", "http://08.1.1.1/", "http://09/",
                      "http://99999999999999999999/", "http://1..2/", "http://example.123/", "http://a.b.0x/",
                      "http://foo.0x1/" /* a name ending in a number is an IPv4 attempt, and "foo" is no number */])
    func numericLastLabelThatIsNotIPv4IsInvalid(text: String) {
        guard case .invalid = problem(text) else {
            Issue.record("\(text) should be invalid")
            return
        }
    }

    @Test func hexLookingButNotNumericLabelIsADomain() throws {
        #expect(try parse("http://0xg/").host == .domain("0xg"))
        #expect(try parse("http://1.2.3.4a/").host == .domain("1.2.3.4a"))
        #expect(try parse("http://123.example/").host == .domain("123.example"))
        #expect(try parse("http://1.2.3.0xg/").host == .domain("1.2.3.0xg"))
    }

    // MARK: IPv6

    @Test(arguments: [("http://[::1]/", "::1"), ("http://[0:0:0:0:0:0:0:1]/", "::1"), ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1"),
                      ("http://[::FFFF:7f00:1]/", "::ffff:127.0.0.1"), ("https://[2001:DB8::1]:8443/x", "2001:db8::1"),
                      ("http://[::127.0.0.1]/", "::7f00:1")])
    func ipv6Literals(text: String, canonical: String) throws {
        let url = try parse(text)
        #expect(url.host == .ipv6(IPAddress(canonical)!))
        #expect(url.host.serialized == "[\(canonical)]")
    }

    @Test(arguments: ["http://[::1/", "http://[::1]x/", "http://[1:2:3]/", "http://[::1%25eth0]/", "http://[:::1]/",
                      "http://[127.0.0.1]/", "http://[::1]:99999/", "http://[]/", "http://[::01.2.3.4]/", "http://::1/"])
    func brokenIPv6IsInvalid(text: String) {
        guard case .invalid = problem(text) else {
            Issue.record("\(text) should be invalid")
            return
        }
    }

    @Test func ipv6WithPort() throws {
        let url = try parse("http://[::1]:8080/a?b")
        #expect(url.port == 8080)
        #expect(url.normalized == "http://[::1]:8080/a?b")
    }

    // MARK: Domains

    @Test(arguments: [("http://EXAMPLE.com/", "example.com"), ("http://example.com./", "example.com"),
                      ("http://ex%41mple.com/", "example.com"), ("http://bücher.de/", "xn--bcher-kva.de"),
                      ("http://BÜCHER.de/", "xn--bcher-kva.de"), ("http://münchen.example/", "xn--mnchen-3ya.example"),
                      ("http://%E2%82%AC.com/", "xn--lzg.com"), ("http://ｅｘａｍｐｌｅ.com/", "example.com"),
                      ("http://a-b_c.example/", "a-b_c.example"), ("http://localhost/", "localhost"),
                      ("http://例え.テスト/", "xn--r8jz45g.xn--zckzah")])
    func domains(text: String, expected: String) throws {
        #expect(try parse(text).host == .domain(expected))
    }

    @Test(arguments: ["http://exa mple.com/", "http://exa<mple.com/", "http://exa>mple.com/", "http://exa^mple.com/",
                      "http://exa|mple.com/", "http://exa%20mple.com/", "http://exa%00mple.com/", "http://exa%25mple.com/",
                      "http://exa%2Fmple.com/", "http://%/", "http://a..b/", "http://.a/", "http://./", "http://../",
                      "http://exa%ffmple.com/", "http://exa%3Ample.com/", "http://exa%40mple.com/", "http://exa[mple.com/"])
    func forbiddenHostsAreInvalid(text: String) {
        guard case .invalid = problem(text) else {
            Issue.record("\(text) should be invalid")
            return
        }
    }

    @Test func overlongNamesAreInvalid() {
        let label = String(repeating: "a", count: 64)
        #expect(problem("http://\(label).com/") != nil)
        let ok = String(repeating: "a", count: 63)
        #expect((try? SubmittedURL.parse("http://\(ok).com/")) != nil)
        let long = Array(repeating: String(repeating: "b", count: 50), count: 6).joined(separator: ".")
        #expect(problem("http://\(long)/") != nil)
    }

    @Test func hugeInputsAreRefusedQuickly() {
        let hugeHost = String(repeating: "ü", count: 20_000)
        #expect(problem("http://\(hugeHost)/") == .invalid("the host name is too long for DNS"))
        let hugePath = "http://example.com/" + String(repeating: "a", count: SubmittedURL.maxLength)
        #expect(problem(hugePath) == .invalid("the URL is longer than 65536 bytes"))
        let longButFine = "http://example.com/?sig=" + String(repeating: "a", count: 8000)
        #expect((try? SubmittedURL.parse(longButFine)) != nil)
    }

    // MARK: Schemes

    @Test(arguments: [("file:///etc/passwd", "file"), ("ftp://example.com/x", "ftp"), ("gopher://example.com/", "gopher"),
                      ("dict://example.com:11211/", "dict"), ("data:text/plain,hi", "data"), ("javascript:alert(1)", "javascript"),
                      ("FILE:///etc/passwd", "file"), ("ws://example.com/", "ws"), ("httpx://example.com/", "httpx"),
                      ("ldap://x/", "ldap"), ("localhost:8080/path", "localhost")])
    func otherSchemesAreUnsupported(text: String, scheme: String) {
        #expect(problem(text) == .unsupportedScheme(scheme))
    }

    @Test func downloadSchemesAreAcceptedOnlyWhereAsked() throws {
        let schemes = SubmittedURL.downloadSchemes
        let ftp = try SubmittedURL.parse("FTP://user:p%40ss@Example.com:21/dir/a.bin", schemes: schemes)
        #expect(ftp.scheme == "ftp" && ftp.port == nil && ftp.effectivePort == 21)
        #expect(ftp.normalized == "ftp://user:p%40ss@example.com/dir/a.bin")
        #expect(ftp.redacted == "ftp://***@example.com/dir/a.bin")
        #expect(try SubmittedURL.parse("ftps://example.com/a", schemes: schemes).effectivePort == 21)
        #expect(try SubmittedURL.parse("ftps://example.com:990/a", schemes: schemes).port == 990)
        #expect(try SubmittedURL.parse("sftp://example.com:22/a", schemes: schemes).normalized == "sftp://example.com/a")
        #expect(try SubmittedURL.parse("sftp://example.com:2222/a", schemes: schemes).effectivePort == 2222)
        // Hosts of every scheme are read by the special-scheme rules: 127.1 is an address, not an opaque name.
        #expect(try SubmittedURL.parse("sftp://127.1/a", schemes: schemes).host == .ipv4(IPAddress("127.0.0.1")!))
        #expect(throws: URLProblem.unsupportedScheme("file")) { try SubmittedURL.parse("file:///etc/passwd", schemes: schemes) }
        #expect(throws: URLProblem.unsupportedScheme("scp")) { try SubmittedURL.parse("scp://example.com/a", schemes: schemes) }
        #expect(throws: URLProblem.unsupportedScheme("sftp")) { try SubmittedURL.parse("sftp://example.com/a") }
    }

    @Test(arguments: ["", "   ", "example.com/file", "//example.com/file", "/file", ":foo", "1http://x/", "http://", "https:///",
                      "http://@/", "http://user@/", "http://:80/", "http:", "http://?x", "http://#x"])
    func missingPartsAreInvalid(text: String) {
        guard case .invalid = problem(text) else {
            Issue.record("\(text) should be invalid")
            return
        }
    }

    @Test func schemeIsCaseInsensitive() throws {
        let url = try parse("HTTPS://Example.COM/Path")
        #expect(url.scheme == "https")
        #expect(url.normalized == "https://example.com/Path")
    }

    @Test func slashesAndBackslashesAfterTheSchemeAreSkippedLikeBrowsers() throws {
        #expect(try parse("http:example.com/a").normalized == "http://example.com/a")
        #expect(try parse("http:/example.com/a").normalized == "http://example.com/a")
        #expect(try parse("http:\\\\example.com\\a\\b").normalized == "http://example.com/a/b")
        #expect(try parse("http:///example.com/").normalized == "http://example.com/")
        // The classic confusion: a backslash ends the authority, so the host is evil.example.
        let url = try parse("http://evil.example\\@good.example/")
        #expect(url.host == .domain("evil.example"))
        #expect(url.userinfo == nil)
        #expect(url.pathAndQuery == "/@good.example/")
    }

    // MARK: Ports

    @Test(arguments: [("http://example.com:80/", nil as Int?), ("https://example.com:443/", nil), ("http://example.com:443/", 443),
                      ("https://example.com:80/", 80), ("http://example.com:8080/", 8080), ("http://example.com:/", nil),
                      ("http://example.com:0/", 0), ("http://example.com:65535/", 65535), ("http://example.com:0080/", nil),
                      ("http://example.com:000000000000000008080/", 8080)])
    func ports(text: String, expected: Int?) throws {
        let url = try parse(text)
        #expect(url.port == expected)
        #expect(url.effectivePort == expected ?? (url.scheme == "https" ? 443 : 80))
    }

    @Test(arguments: ["http://example.com:65536/", "http://example.com:99999999999999999999/", "http://example.com:-1/",
                      "http://example.com:8o/", "http://example.com:80:80/", "http://example.com: 80/", "http://example.com:+80/"])
    func badPortsAreInvalid(text: String) {
        guard case .invalid = problem(text) else {
            Issue.record("\(text) should be invalid")
            return
        }
    }

    // MARK: Userinfo

    @Test func userinfoIsKeptForLibcurlButRedactedForLogs() throws {
        let url = try parse("https://alice:s3cret@example.com/private")
        #expect(url.userinfo == "alice:s3cret")
        #expect(url.normalized == "https://alice:s3cret@example.com/private")
        #expect(url.redacted == "https://***@example.com/private")
        #expect(try parse("https://example.com/open").redacted == "https://example.com/open")
        #expect(SubmittedURL.redacting("http://bob:pw@cdn.example/a@b?c=@") == "http://***@cdn.example/a@b?c=@")
        #expect(SubmittedURL.redacting("http://u:p@x@host:8080/") == "http://***@host:8080/")
        #expect(SubmittedURL.redacting("https://cdn.example/p?q=a@b") == "https://cdn.example/p?q=a@b")
        #expect(SubmittedURL.redacting("not a url") == "not a url")
        #expect(url.host == .domain("example.com"))
    }

    @Test func userinfoEdgeCases() throws {
        #expect(try parse("http://@example.com/").userinfo == nil)
        #expect(try parse("http://:@example.com/").userinfo == nil)
        #expect(try parse("http://user:@example.com/").userinfo == "user")
        #expect(try parse("http://a b:p@ss@example.com/").userinfo == "a%20b:p%40ss")
        #expect(try parse("http://user%40x:pa%3Ass@example.com/").userinfo == "user%40x:pa%3Ass")
        #expect(try parse("http://josé@example.com/").userinfo == "jos%C3%A9")
        // The last @ separates userinfo: the host is what browsers connect to.
        #expect(try parse("http://a@b@127.1/").host == .ipv4(IPAddress("127.0.0.1")!))
    }

    // MARK: Path and query

    @Test(arguments: [
        ("http://example.com", "/"), ("http://example.com?q=1", "/?q=1"), ("http://example.com/a/b?c=d&e", "/a/b?c=d&e"),
        ("http://example.com/a#frag", "/a"), ("http://example.com/a?b#c?d", "/a?b"), ("http://example.com/#x", "/"),
        ("http://example.com/a b", "/a%20b"), ("http://example.com/?q=a b", "/?q=a%20b"), ("http://example.com/€", "/%E2%82%AC"),
        ("http://example.com/%E2%82%AC", "/%E2%82%AC"), ("http://example.com/%zz%", "/%zz%"), ("http://example.com/a/../b", "/a/../b"),
        ("http://example.com/a\\b", "/a/b"), ("http://example.com/?a\\b", "/?a\\b"), ("http://example.com/x?", "/x?"),
        ("http://example.com/a%2Fb;c=d", "/a%2Fb;c=d"), ("http://example.com/\"<>`{}|^'", "/\"<>`{}|^'"),
        ("  http://example.com/trim  \n", "/trim"),
    ])
    func pathAndQueryAreKeptByteExact(text: String, expected: String) throws {
        #expect(try parse(text).pathAndQuery == expected)
    }

    @Test(arguments: ["http://example.com/a\nb", "http://example.com/a\rb", "http://example.com/a\tb", "http://example.com/a\u{0}b",
                      "http://example.com/a\u{7f}b", "http://exa\tmple.com/", "http://example.com/?a=\r\nX-Injected: 1"])
    func controlCharactersAreInvalid(text: String) {
        #expect(problem(text) == .invalid("the URL contains control characters"))
    }

    @Test func normalizedAndDedupeKey() throws {
        let a = try parse("HTTP://Example.COM:80/file?x=1#top")
        let b = try parse("http://example.com/file?x=1")
        #expect(a == b)
        #expect(a.normalized == "http://example.com/file?x=1")
        #expect(a.dedupeKey == b.dedupeKey)
        let c = try parse("http://example.com/File?x=1")
        #expect(c.dedupeKey != a.dedupeKey)
        let d = try parse("https://example.com/file?x=1")
        #expect(d.dedupeKey != a.dedupeKey)
    }

    @Test func signingParametersAreNotPartOfTheDedupeKey() throws {
        let s3 = try parse("https://b.s3.example.com/o.iso?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20261127T000000Z&X-Amz-Expires=600&X-Amz-Signature=ab&x-id=GetObject")
        let later = try parse("https://b.s3.example.com/o.iso?x-id=GetObject&X-Amz-Date=20261127T010000Z&X-Amz-Signature=cd")
        #expect(s3.dedupeKey == "https://b.s3.example.com/o.iso?x-id=GetObject")
        #expect(later.dedupeKey == s3.dedupeKey)
        #expect(s3.normalized.contains("X-Amz-Signature=ab"), "the link itself is kept whole")
        let cloudFront = try parse("https://d.example.net/a.bin?Expires=1&Signature=x&Key-Pair-Id=K")
        #expect(cloudFront.dedupeKey == "https://d.example.net/a.bin")
        let google = try parse("https://storage.example.com/b/o?x-goog-signature=1&X-Goog-Credential=c&alt=media")
        #expect(google.dedupeKey == "https://storage.example.com/b/o?alt=media")
        let other = try parse("https://example.com/a?signaturex=1&version=2")
        #expect(other.dedupeKey == other.normalized)
    }

    @Test func normalizedReparsesToItself() throws {
        for text in ["http://127.1:8080/a b?c d#e", "https://u:p@[::ffff:1.2.3.4]/x", "http://bücher.de/€?€", "http://0x7f.1"] {
            let url = try parse(text)
            #expect(try parse(url.normalized) == url)
        }
    }

    @Test func errorMessagesNeverContainUserinfo() {
        for text in ["http://alice:s3cret@exa mple.com/", "http://alice:s3cret@example.com:99999/", "http://alice:s3cret@[::1/"] {
            guard case .invalid(let message)? = problem(text) else {
                Issue.record("\(text) should be invalid")
                continue
            }
            #expect(!message.contains("s3cret"))
            #expect(!message.contains("alice"))
        }
    }
}
