import Testing
@testable import FerryService

@Suite("Idempotency fingerprints")
struct RequestFingerprintTests {
    func fingerprint(_ text: String) -> String {
        RequestFingerprint.of(method: "POST", path: "/api/v1/jobs", body: Array(text.utf8))
    }

    @Test func keyOrderAndSpacingDoNotMatter() {
        #expect(fingerprint(#"{"url":"http://e.org/a","paused":true}"#) == fingerprint(#"{ "paused": true, "url": "http://e.org/a" }"#))
        #expect(fingerprint(#"[{"url":"a","priority":1}]"#) == fingerprint(#"[{"priority":1,"url":"a"}]"#))
    }

    @Test func differentRequestsDiffer() {
        #expect(fingerprint(#"{"url":"http://e.org/a"}"#) != fingerprint(#"{"url":"http://e.org/b"}"#))
        #expect(fingerprint(#"{"url":"a","paused":true}"#) != fingerprint(#"{"url":"a","paused":false}"#))
        #expect(fingerprint(#"[{"url":"a"},{"url":"b"}]"#) != fingerprint(#"[{"url":"b"},{"url":"a"}]"#))
    }

    @Test func bodiesThatAreNotJSONUseTheirBytes() {
        #expect(fingerprint("{not json") == fingerprint("{not json"))
        #expect(fingerprint("{not json") != fingerprint("{not json "))
    }
}
