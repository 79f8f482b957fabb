@testable import FerryClient
import Foundation
import Testing

@Suite("ferry add arguments → request")
struct SubmissionTests {
    private func json(_ submission: Submission) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(submission.body))
    }

    @Test func oneURLIsASingleObjectWithOnlyTheOptionsGiven() throws {
        let submission = try AddArguments(urls: ["https://example.com/a.iso"]).submission()
        #expect(submission == .single(JobSubmission(url: "https://example.com/a.iso")))
        #expect(String(decoding: submission.body, as: UTF8.self) == #"{"url":"https://example.com/a.iso"}"#)
    }

    @Test func everyOptionMapsToItsField() throws {
        let digest = String(repeating: "AB", count: 32)
        let submission = try AddArguments(
            urls: ["https://example.com/a.iso"], filename: "b.iso", sha256: digest, priority: -3, connections: 4,
            paused: true, headers: ["Authorization: Bearer x", "X-Empty:"]).submission()
        let object = try #require(try json(submission) as? [String: Any])
        #expect(object["url"] as? String == "https://example.com/a.iso")
        #expect(object["filename"] as? String == "b.iso")
        #expect(object["sha256"] as? String == digest.lowercased())
        #expect(object["priority"] as? Int == -3)
        #expect(object["connections"] as? Int == 4)
        #expect(object["paused"] as? Bool == true)
        #expect(object["headers"] as? [String: String] == ["Authorization": "Bearer x", "X-Empty": ""])
    }

    @Test func severalURLsAreABatchSharingTheCommonOptions() throws {
        let submission = try AddArguments(urls: ["http://a/1", "http://a/2"], priority: 2, paused: true,
                                          headers: ["Cookie: k=v"]).submission()
        guard case .batch(let items) = submission else { Issue.record("not a batch"); return }
        #expect(items.map(\.url) == ["http://a/1", "http://a/2"])
        #expect(items.allSatisfy { $0.priority == 2 && $0.paused == true && $0.headers == ["Cookie": "k=v"] })
        let array = try #require(try json(submission) as? [[String: Any]])
        #expect(array.count == 2)
    }

    @Test func tagsGoToEveryJobInTheirOrderAndOnlyWhenGiven() throws {
        let submission = try AddArguments(urls: ["http://a/1", "http://a/2"], tags: ["b", "a", "b"]).submission()
        let array = try #require(try json(submission) as? [[String: Any]])
        #expect(array.map { $0["tags"] as? [String] } == [["b", "a", "b"], ["b", "a", "b"]])
        let untagged = try AddArguments(urls: ["http://a/1"]).submission()
        #expect(!String(decoding: untagged.body, as: UTF8.self).contains("tags"))
    }

    @Test func aChecksumIsSentAsAnAlgorithmAndALowercaseValue() throws {
        let value = String(repeating: "9F", count: 64)
        let submission = try AddArguments(urls: ["https://example.com/a.iso"], checksum: "SHA-512:" + value).submission()
        let object = try #require(try json(submission) as? [String: Any])
        #expect(object["checksum"] as? [String: String] == ["algorithm": "sha-512", "value": value.lowercased()])
        #expect(object["sha256"] == nil)
    }

    @Test func aMalformedChecksumIsAUsageErrorSayingWhy() {
        func usage(_ checksum: String, urls: [String] = ["http://a/1"], sha256: String? = nil) -> String? {
            do { _ = try AddArguments(urls: urls, sha256: sha256, checksum: checksum).submission(); return nil } catch {
                if case .usage(let text) = error { return text }
                return "\(error)"
            }
        }
        #expect(usage("sha-3:00")?.contains("not one of sha-256, sha-512, sha-1, md5") == true)
        #expect(usage("md5:" + String(repeating: "0", count: 40))?.contains("MD5 value is 32 hexadecimal digits, not 40") == true)
        #expect(usage(String(repeating: "0", count: 64))?.contains("ALGORITHM:HEX") == true)
        #expect(usage("sha-1:" + String(repeating: "z", count: 40))?.contains("hexadecimal") == true)
        #expect(usage("md5:" + String(repeating: "0", count: 32), urls: ["http://a/1", "http://a/2"])?.contains("single URL") == true)
        #expect(usage("md5:" + String(repeating: "0", count: 32), sha256: String(repeating: "0", count: 64))?.contains("give one") == true)
    }

    @Test func optionsForOneFileAreRefusedWithSeveralURLs() {
        #expect(throws: ClientError.usage("--filename names one file: give a single URL with it")) {
            try AddArguments(urls: ["http://a/1", "http://a/2"], filename: "x").submission()
        }
        #expect(throws: ClientError.self) {
            try AddArguments(urls: ["http://a/1", "http://a/2"], sha256: String(repeating: "0", count: 64)).submission()
        }
        #expect(throws: ClientError.self) { try AddArguments(urls: []).submission() }
    }

    @Test func aSpeedLimitAndConnectionsMapToTheirFields() throws {
        let submission = try AddArguments(urls: ["https://example.com/a.iso"], maxBytesPerSecond: 5_242_880,
                                          connections: 8).submission()
        let object = try #require(try json(submission) as? [String: Any])
        #expect(object["maxBytesPerSecond"] as? Int == 5_242_880)
        #expect(object["connections"] as? Int == 8)
        #expect(String(decoding: submission.body, as: UTF8.self)
            == #"{"connections":8,"maxBytesPerSecond":5242880,"url":"https://example.com/a.iso"}"#)
        let batch = try AddArguments(urls: ["http://a/1", "http://a/2"], maxBytesPerSecond: 1000).submission()
        #expect(batch.items.allSatisfy { $0.maxBytesPerSecond == 1000 })
    }

    @Test func connectionsOutside1To16AndAZeroSpeedAreRefusedBeforeAnyRequest() throws {
        for connections in [1, 16] {
            _ = try AddArguments(urls: ["http://a"], connections: connections).submission()
        }
        #expect(throws: ClientError.usage("--connections must be from 1 to 16 (got 17)")) {
            try AddArguments(urls: ["http://a"], connections: 17).submission()
        }
        #expect(throws: ClientError.usage("--connections must be from 1 to 16 (got 0)")) {
            try AddArguments(urls: ["http://a"], connections: 0).submission()
        }
        #expect(throws: ClientError.self) { try AddArguments(urls: ["http://a"], maxBytesPerSecond: 0).submission() }
    }

    @Test func aDigestMustBe64HexDigits() {
        #expect(throws: ClientError.self) { try AddArguments(urls: ["http://a"], sha256: "abc").submission() }
        #expect(throws: ClientError.self) {
            try AddArguments(urls: ["http://a"], sha256: String(repeating: "g", count: 64)).submission()
        }
    }

    @Test func headerLines() throws {
        #expect(try AddArguments.parseHeaders([]) == nil)
        #expect(try AddArguments.parseHeaders(["  Accept :  text/plain  ", "X-A: b: c"]) == ["Accept": "text/plain", "X-A": "b: c"])
        #expect(throws: ClientError.self) { try AddArguments.parseHeaders(["no colon"]) }
        #expect(throws: ClientError.self) { try AddArguments.parseHeaders([": value"]) }
        #expect(throws: ClientError.self) { try AddArguments.parseHeaders(["Bad Name: v"]) }
        #expect(throws: ClientError.self) { try AddArguments.parseHeaders(["X-A: 1", "x-a: 2"]) }
    }
}
