import Testing
@testable import FerryCore

@Suite struct ContentDispositionTests {
    @Test(arguments: [
        ("attachment; filename=\"report.pdf\"", "report.pdf" as String?),
        ("attachment; filename=report.pdf", "report.pdf"),
        ("inline; filename=report.pdf", "report.pdf"),
        ("attachment;filename=report.pdf", "report.pdf"),
        ("attachment ; filename = \"report.pdf\" ", "report.pdf"),
        ("ATTACHMENT; FILENAME=\"Report.PDF\"", "Report.PDF"),
        ("attachment; FileName=a.txt", "a.txt"),
        ("attachment; filename=\"a\\\"b\\\\c.txt\"", "a\"b\\c.txt"),
        ("attachment; filename=\"a\\bc.txt\"", "abc.txt"),
        ("attachment; filename=\"semi;colon.txt\"", "semi;colon.txt"),
        ("attachment; filename=\"\"", nil),
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=utf-8''%e2%82%ac.txt", "€.txt"),
        ("attachment; filename*=UTF-8'en'%E2%82%AC.txt", "€.txt"),
        ("attachment; filename*=ISO-8859-1''caf%E9.txt", "café.txt"),
        ("attachment; filename*=iso-8859-1'fr'%A3%20rates", "£ rates"),
        ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC.txt", "€.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC.txt; filename=\"fallback.txt\"", "€.txt"),
        ("attachment; FILENAME*=UTF-8''x.txt; filename=y.txt", "x.txt"),
        ("attachment; filename*=\"UTF-8''quoted.txt\"", "quoted.txt"),
        ("attachment; filename*=KOI8-R''%C1; filename=\"fallback.txt\"", "fallback.txt"),
        ("attachment; filename*=UTF-8''%FF.txt; filename=\"fallback.txt\"", "fallback.txt"),
        ("attachment; filename*=UTF-8''%E2%82.txt; filename=fb.txt", "fb.txt"),
        ("attachment; filename*=UTF-8''%zz; filename=fb.txt", "fb.txt"),
        ("attachment; filename*=UTF-8%E2%82%AC; filename=fb.txt", "fb.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC", "€"),
        ("attachment; filename*=UTF-8''", nil),
        ("attachment; filename=first.txt; filename=second.txt", "first.txt"),
        ("attachment; size=100; filename=a.txt; creation-date=\"x\"", "a.txt"),
        ("filename=no-type.txt", "no-type.txt"),
        ("attachment; filename=with space.txt", "with space.txt"),
        ("attachment; filename=\"caf\u{C3}\u{A9}.txt\"", "café.txt"),
        ("attachment; filename=\"caf\u{E9}.txt\"", "café.txt"),
        ("attachment; filename=\"../../etc/passwd\"", "../../etc/passwd"),
        ("attachment", nil), ("inline", nil), ("", nil), (";;;", nil), ("attachment; name=x", nil),
        ("attachment; filename=\"unterminated", nil), ("attachment; filename=\"x\\", nil), ("attachment; filename", nil),
        ("attachment; =x", nil), ("attachment; filename=\"a\"junk", nil), ("attachment; filename=a\"b", nil),
    ])
    func parses(header: String, expected: String?) {
        #expect(ContentDisposition.filename(header) == expected)
    }

    @Test func neverCrashesOnArbitraryInput() {
        var generator = SeededGenerator(seed: 7)
        let alphabet: [Character] = ["a", "\"", "\\", ";", "=", "*", "'", "%", "E", "2", " ", "f", "i", "l", "n", "m", "e", "\u{0}", "€"]
        for _ in 0..<3000 {
            let length = Int.random(in: 0..<40, using: &generator)
            let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
            _ = ContentDisposition.filename(text)
            _ = ContentDisposition.filename("attachment; filename*=" + text)
            _ = ContentDisposition.filename("attachment; filename=\"" + text)
        }
    }

    @Test func manyParametersStayLinear() {
        let header = "attachment" + String(repeating: "; a=b", count: 20_000) + "; filename=last.txt"
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(ContentDisposition.filename(header) == "last.txt") }
        #expect(elapsed < .seconds(5))
    }

    @Test(arguments: [
        ("report.pdf", "attachment; filename=\"report.pdf\"; filename*=UTF-8''report.pdf"),
        ("€ rates.txt", "attachment; filename=\"_ rates.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt"),
        ("a\"b\\c.txt", "attachment; filename=\"a\\\"b\\\\c.txt\"; filename*=UTF-8''a%22b%5Cc.txt"),
        ("日本.txt", "attachment; filename=\"__.txt\"; filename*=UTF-8''%E6%97%A5%E6%9C%AC.txt"),
        ("x;y=z'%.txt", "attachment; filename=\"x;y=z'%.txt\"; filename*=UTF-8''x%3By%3Dz%27%25.txt"),
        ("!#$&+-.^_`|~", "attachment; filename=\"!#$&+-.^_`|~\"; filename*=UTF-8''!#$&+-.^_`|~"),
        ("👩‍👩‍👧", "attachment; filename=\"_____\"; filename*=UTF-8''%F0%9F%91%A9%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7"),
    ])
    func attachmentHeader(name: String, expected: String) {
        #expect(ContentDisposition.attachment(filename: name) == expected)
    }

    @Test(arguments: ["report.pdf", "€ rates.txt", "a\"b\\c.txt", "日本.txt", "x;y=z'%.txt", "👩‍👩‍👧 family.png", "tab\there"])
    func attachmentRoundTrips(name: String) {
        #expect(ContentDisposition.filename(ContentDisposition.attachment(filename: name)) == name)
    }
}
