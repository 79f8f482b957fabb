@testable import FerryClient
import FerryTestSupport
import Foundation
import Testing

@Suite("get: digest, names, resume decisions")
struct DownloadLogicTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func sha256KnownAnswers(_ message: String, _ digest: String) {
        #expect(SHA256.hex(of: Array(message.utf8)) == digest)
    }

    @Test func sha256OfAMillionAs() {
        let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hex(of: bytes) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha256AgreesWithOpenSSLHoweverTheBytesAreFed() {
        let content = Fixture.content(size: 200_003, seed: 5)
        let reference = Fixture.sha256Hex(of: content)
        #expect(SHA256.hex(of: content) == reference)
        for piece in [1, 63, 64, 65, 1000, 65_536] {
            var digest = SHA256()
            var offset = 0
            while offset < content.count {
                let end = min(content.count, offset + piece)
                content[offset..<end].withUnsafeBytes { digest.update($0) }
                offset = end
            }
            #expect(digest.finishHex() == reference, "pieces of \(piece)")
        }
        // Lengths around the padding boundary.
        for length in 50...130 {
            let slice = Array(content.prefix(length))
            #expect(SHA256.hex(of: slice) == Fixture.sha256Hex(of: slice), "length \(length)")
        }
    }

    @Test(arguments: [
        ("report.pdf", "report.pdf"), ("../../etc/passwd", "_.._etc_passwd"), ("a/b\\c", "a_b_c"),
        (".bashrc", "bashrc"), ("...", "download"), ("", "download"), ("  spaced  ", "spaced"),
        ("tab\there\u{1B}[0m", "tabhere[0m"), ("名前.txt", "名前.txt"),
    ])
    func localNamesNeverLeaveTheDirectory(_ name: String, _ expected: String) {
        #expect(LocalFilename.sanitize(name) == expected)
    }

    @Test func localNamesAreAtMost255Bytes() {
        let long = String(repeating: "é", count: 300)
        let safe = LocalFilename.sanitize(long)
        #expect(safe.utf8.count <= 255)
        #expect(LocalFilename.sanitize(nil) == "download")
    }

    @Test func resumeDecisions() {
        let etag = "\"abc\""
        #expect(ResumePlan.decide(localSize: nil, remoteLength: 100, validator: etag) == .fromStart)
        #expect(ResumePlan.decide(localSize: 0, remoteLength: 100, validator: etag) == .fromStart)
        #expect(ResumePlan.decide(localSize: 40, remoteLength: 100, validator: etag) == .resume(from: 40))
        #expect(ResumePlan.decide(localSize: 100, remoteLength: 100, validator: etag) == .verifyExisting)
        #expect(ResumePlan.decide(localSize: 140, remoteLength: 100, validator: etag) == .fromStart)
        #expect(ResumePlan.decide(localSize: 40, remoteLength: 100, validator: nil) == .fromStart)
        #expect(ResumePlan.decide(localSize: 40, remoteLength: 100, validator: "W/\"weak\"") == .fromStart,
                "If-Range needs a strong validator")
    }

    @Test func contentRangeStarts() {
        #expect(ResumePlan.rangeStart("bytes 700-999/1000") == 700)
        #expect(ResumePlan.rangeStart(" Bytes 0-9/10") == 0)
        #expect(ResumePlan.rangeStart("bytes */1000") == nil)
        #expect(ResumePlan.rangeStart(nil) == nil)
        #expect(ResumePlan.rangeStart("items 1-2/3") == nil)
    }

    @Test func destinations() throws {
        let job = Job(id: "x", url: "http://o/f", state: .finished, filename: "../f.bin")
        #expect(ContentDownload.destination(output: nil, job: job) == "_f.bin")
        #expect(ContentDownload.destination(output: "out.bin", job: job) == "out.bin")
        #expect(ContentDownload.destination(output: "dir/", job: job) == "dir/_f.bin")
        let directory = try Fixture.tempDirectory("ferry-destination")
        defer { Fixture.removeTree(directory) }
        #expect(ContentDownload.destination(output: directory, job: job) == directory + "/_f.bin")
    }

    @Test func jsonSlicesKeepTheServersBytes() {
        let body = Array(#"{"next":null, "jobs": [ {"id":"a","s":"x]}\"y","n":[1,{"b":2}]} , {"id":"b"}],"z":1}"#.utf8)
        let elements = JSONSlices.arrayElements(ofKey: "jobs", in: body)
        #expect(elements?.map { String(decoding: $0, as: UTF8.self) }
            == [#"{"id":"a","s":"x]}\"y","n":[1,{"b":2}]}"#, #"{"id":"b"}"#])
        #expect(JSONSlices.arrayElements(ofKey: "jobs", in: Array(#"{"jobs":[]}"#.utf8)) == [])
        #expect(JSONSlices.arrayElements(ofKey: "missing", in: body) == nil)
        #expect(JSONSlices.arrayElements(ofKey: "jobs", in: Array("[1]".utf8)) == nil)
        #expect(JSONSlices.elements(ofArray: Array("[1, true ,\"a,b\"]".utf8))?.map { String(decoding: $0, as: UTF8.self) }
            == ["1", "true", "\"a,b\""])
        #expect(JSONSlices.elements(ofArray: Array("[1,".utf8)) == nil)
    }
}
