import FerryCore
@testable import FerryClient
import Foundation
import Testing

/// `ferry add URL --mirror …` and how `ferry show` lists a job's sources.
@Suite("Mirrors in the client")
struct MirrorArgumentsTests {
    @Test func mirrorsAreSentWithTheirURLInOrder() throws {
        var arguments = AddArguments(urls: ["https://a.example/f.iso"])
        arguments.mirrors = ["https://b.example/f.iso", "https://c.example/f.iso"]
        #expect(String(decoding: try arguments.submission().body, as: UTF8.self)
            == #"{"mirrors":["https://b.example/f.iso","https://c.example/f.iso"],"url":"https://a.example/f.iso"}"#)
        let plain = try AddArguments(urls: ["https://a.example/f.iso"]).submission()
        #expect(!String(decoding: plain.body, as: UTF8.self).contains("mirrors"))
    }

    @Test func mirrorsNameOneFile() {
        var arguments = AddArguments(urls: ["https://a.example/1", "https://a.example/2"])
        arguments.mirrors = ["https://b.example/1"]
        #expect(throws: ClientError.usage("--mirror serves one file: give a single URL with it")) { try arguments.submission() }
    }

    @Test func showListsEachSourceWithItsBytesAndWhyItWasDropped() throws {
        let json = #"""
            {"id": "j1", "url": "https://a.example/f.iso", "state": "finished", "bytesReceived": 3145728,
             "sources": [
               {"url": "https://a.example/f.iso", "bytesReceived": 3145728, "state": "active", "error": null},
               {"url": "https://***@b.example/f.iso", "bytesReceived": 0, "state": "dropped",
                "error": {"code": "source_mismatch", "message": "the mirror's ETag differs"}}]}
            """#
        let job = try JSONDecoder().decode(Job.self, from: Data(json.utf8))
        let lines = JobDetails.lines(job).filter { $0.hasPrefix("source") }
        #expect(lines.count == 2)
        #expect(lines[0].hasSuffix("https://a.example/f.iso  3.0 MiB  active"), "\(lines)")
        #expect(lines[1].hasSuffix("https://***@b.example/f.iso  0 B  dropped (source_mismatch: the mirror's ETag differs)"), "\(lines)")
    }
}
