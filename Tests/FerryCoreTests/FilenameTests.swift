import Testing
@testable import FerryCore

@Suite struct FilenameTests {
    // MARK: sanitize

    @Test(arguments: [
        ("report.pdf", "report.pdf" as String?), ("../../etc/passwd", "passwd"), ("..", nil), (".", nil), ("...", nil),
        ("....", nil), (". . .", nil), (".hidden", "hidden"), ("..hidden", "hidden"), ("...hidden.txt", "hidden.txt"),
        ("a\u{0}b.txt", "ab.txt"), ("a\u{1}\u{1f}\u{7f}\u{85}\u{9f}b", "ab"), ("line\nbreak.txt", "linebreak.txt"),
        ("tab\there", "tabhere"), ("evil\u{202E}fdp.exe", "evilfdp.exe"), ("\u{202A}\u{202B}\u{202C}\u{202D}x", "x"),
        ("\u{2066}\u{2067}\u{2068}\u{2069}\u{200E}\u{200F}\u{061C}y", "y"), ("\u{FEFF}bom.txt", "bom.txt"),
        ("C:\\Users\\me\\file.txt", "file.txt"), ("..\\..\\windows\\win.ini", "win.ini"), ("dir/", "dir"), ("/", nil),
        ("", nil), ("   ", nil), ("\u{0}", nil), ("a/b/../..", nil), ("name.", "name"), ("name. . ", "name"),
        ("  spaced  .txt  ", "spaced  .txt"), ("what?.txt", "what_.txt"), ("a<b>c:d\"e|f*g", "a_b_c_d_e_f_g"),
        ("Résumé €.pdf", "Résumé €.pdf"), ("日本語.txt", "日本語.txt"), ("a..b.txt", "a..b.txt"), ("\u{3000}wide\u{00A0}", "wide"),
        ("emoji 👩‍👩‍👧.png", "emoji 👩‍👩‍👧.png"), ("ok\u{2028}\u{2029}", "ok"),
        ("nul.txt", "_nul.txt"), ("CON", "_CON"), ("com1.log", "_com1.log"), ("LPT9", "_LPT9"), ("aux.tar.gz", "_aux.tar.gz"),
        ("com0.txt", "com0.txt"), ("console.txt", "console.txt"), ("COM10", "COM10"), ("nullable.txt", "nullable.txt"),
    ])
    func sanitizes(raw: String, expected: String?) {
        #expect(Filename.sanitize(raw) == expected)
    }

    @Test func resultsAreAlwaysSafe() {
        let nasty = ["../x", "..\\x", "a/\u{0}/..", ".", "\u{202E}", "x/.", "..../", "a\u{85}b", "/..//../",
                     String(repeating: "é", count: 300), String(repeating: ".", count: 300) + "x"]
        for raw in nasty {
            guard let name = Filename.sanitize(raw) else { continue }
            #expect(!name.contains("/"))
            #expect(!name.contains("\\"))
            #expect(name != "..")
            #expect(!name.hasPrefix("."))
            #expect(name.utf8.count <= 255)
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        }
    }

    @Test func capsAt255BytesKeepingTheExtension() throws {
        let long = String(repeating: "a", count: 300) + ".tar.gz"
        let name = try #require(Filename.sanitize(long))
        #expect(name.utf8.count == 255)
        #expect(name.hasSuffix(".tar.gz"))
        #expect(name.hasPrefix("aaaa"))

        let plain = String(repeating: "b", count: 300)
        #expect(Filename.sanitize(plain) == String(repeating: "b", count: 255))

        let exactly = String(repeating: "c", count: 251) + ".txt"
        #expect(Filename.sanitize(exactly) == exactly)
    }

    @Test func capNeverSplitsAScalar() throws {
        // "€" is 3 bytes: 100 of them (300 bytes) + ".txt" must become 83 euros (249 bytes) + ".txt" = 253 bytes.
        let euros = String(repeating: "€", count: 100) + ".txt"
        let name = try #require(Filename.sanitize(euros))
        #expect(name == String(repeating: "€", count: 83) + ".txt")
        #expect(name.utf8.count == 253)
        // 4-byte scalars, odd remainder.
        let smileys = "x" + String(repeating: "😀", count: 80)
        let capped = try #require(Filename.sanitize(smileys))
        #expect(capped == "x" + String(repeating: "😀", count: 63))
        #expect(capped.utf8.count == 253)
        #expect(String(validating: Array(capped.utf8), as: UTF8.self) != nil)
    }

    @Test func capKeepsGraphemesWhole() throws {
        // q + combining acute (no precomposed form: 3 bytes per character); the cut must not leave a bare "q".
        let accented = String(repeating: "q\u{301}", count: 100)
        let name = try #require(Filename.sanitize(accented))
        #expect(name.utf8.count == 255)
        #expect(name.unicodeScalars.elementsEqual(String(repeating: "q\u{301}", count: 85).unicodeScalars))
        // One giant grapheme falls back to scalar boundaries.
        let giant = "a" + String(repeating: "\u{301}", count: 200)
        let cut = try #require(Filename.sanitize(giant))
        #expect(cut.utf8.count <= 255)
        #expect(cut.utf8.count >= 253)
    }

    @Test func normalizesToNFC() throws {
        let decomposed = "Re\u{301}sume\u{301}.pdf"
        let name = try #require(Filename.sanitize(decomposed))
        #expect(Array(name.utf8) == Array("R\u{E9}sum\u{E9}.pdf".utf8))
    }

    @Test func hugeExtensionIsNotKept() throws {
        let name = try #require(Filename.sanitize("a." + String(repeating: "x", count: 300)))
        #expect(name.utf8.count == 255)
        #expect(name.hasPrefix("a.xxx"))
    }

    @Test func truncationTrimsTrailingDotsAndSpaces() throws {
        let raw = String(repeating: "a", count: 249) + "   . " + String(repeating: "z", count: 10) + ".txt"
        let name = try #require(Filename.sanitize(raw))
        #expect(name == String(repeating: "a", count: 249) + ".txt")
    }

    // MARK: fromURLPath

    @Test(arguments: [
        ("https://example.com/files/report.pdf", "report.pdf" as String?), ("https://example.com/%E2%82%AC.txt", "€.txt"),
        ("https://example.com/a%20b.txt", "a b.txt"), ("https://example.com/dir/", "dir"), ("https://example.com/dir//", "dir"),
        ("https://example.com/", nil), ("https://example.com", nil), ("https://example.com?x=/a.txt", nil),
        ("https://example.com/get.php?file=a.zip", "get.php"), ("https://example.com/a.zip#frag/b.txt", "a.zip"),
        ("https://example.com/x/..", nil), ("https://example.com/%2e%2e", nil), ("https://example.com/a%2Fb.txt", "b.txt"),
        ("https://example.com/%00evil.txt", "evil.txt"), ("https://example.com/caf%E9.txt", "café.txt"),
        ("https://example.com/100%.txt", "100%.txt"), ("https://example.com/%2ehidden", "hidden"),
        ("/local/path/file.bin", "file.bin"), ("file.bin", "file.bin"), ("https://user:pw@example.com/f.iso", "f.iso"),
        ("https://example.com/%E6%97%A5%E6%9C%AC.txt", "日本.txt"), ("https://example.com/a\\b.txt", "b.txt"),
    ])
    func fromURLPath(url: String, expected: String?) {
        #expect(Filename.fromURLPath(url) == expected)
    }

    // MARK: resolve

    @Test func resolveOrder() {
        let url = "https://example.com/from-url.bin"
        let header = "attachment; filename=\"from-header.bin\""
        #expect(Filename.resolve(requested: "mine.bin", contentDisposition: header, finalURL: url) == "mine.bin")
        #expect(Filename.resolve(requested: nil, contentDisposition: header, finalURL: url) == "from-header.bin")
        #expect(Filename.resolve(requested: "..", contentDisposition: header, finalURL: url) == "from-header.bin")
        #expect(Filename.resolve(requested: nil, contentDisposition: nil, finalURL: url) == "from-url.bin")
        #expect(Filename.resolve(requested: nil, contentDisposition: "attachment; filename=\"..\"", finalURL: url) == "from-url.bin")
        #expect(Filename.resolve(requested: nil, contentDisposition: "garbage\"", finalURL: url) == "from-url.bin")
        #expect(Filename.resolve(requested: nil, contentDisposition: nil, finalURL: "https://example.com/") == "download")
        #expect(Filename.resolve(requested: "", contentDisposition: "inline", finalURL: "https://example.com/?x") == "download")
        #expect(Filename.resolve(requested: nil, contentDisposition: "attachment; filename=\"../../x.sh\"", finalURL: url) == "x.sh")
    }

    // MARK: variant

    @Test(arguments: [
        ("report.pdf", 1, "report (1).pdf"), ("report.pdf", 12, "report (12).pdf"), ("README", 2, "README (2)"),
        ("a.tar.gz", 1, "a (1).tar.gz"), ("a.TAR.GZ", 1, "a (1).TAR.GZ"), ("a.tar.zst", 3, "a (3).tar.zst"),
        ("a.b.c", 1, "a.b (1).c"), ("x.tar", 1, "x (1).tar"), ("report.pdf", 0, "report.pdf"), ("report.pdf", -1, "report.pdf"),
        (".tar.gz", 1, ".tar (1).gz"), ("v1.2", 1, "v1 (1).2"),
    ])
    func variant(name: String, number: Int, expected: String) {
        #expect(Filename.variant(name, number: number) == expected)
    }

    @Test func variantStaysWithin255Bytes() {
        let long = String(repeating: "é", count: 125) + ".txt"  // 250 + 4 = 254 bytes
        for number in [1, 99, 123_456] {
            let variant = Filename.variant(long, number: number)
            #expect(variant.utf8.count <= 255)
            #expect(variant.hasSuffix(" (\(number)).txt"))
            #expect(String(validating: Array(variant.utf8), as: UTF8.self) != nil)
        }
        let hugeExtension = "a." + String(repeating: "x", count: 253)
        #expect(Filename.variant(hugeExtension, number: 1).utf8.count <= 255)
    }
}
