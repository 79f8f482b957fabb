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
        #expect(draft.checksum == (try Checksum(algorithm: .sha256, value: String(repeating: "ab", count: 32))))
    }

    /// The API's error message for `body`, or nil when it is accepted.
    func message(_ body: JobDraft.Body) -> String? {
        do { _ = try JobDraft.validate(body, destinations: AddressPolicy()); return nil } catch { return error.message }
    }

    func checksum(_ algorithm: String?, _ value: String?) -> JobDraft.ChecksumBody {
        JobDraft.ChecksumBody(algorithm: algorithm, value: value)
    }

    @Test func checksumsOfEachAlgorithmAreAcceptedLowercased() throws {
        for algorithm in DigestAlgorithm.allCases {
            let value = String(repeating: "Ab", count: algorithm.hexLength / 2)
            let draft = try JobDraft.validate(body("http://e.org/") { $0.checksum = checksum(algorithm.rawValue.uppercased(), value) },
                                              destinations: AddressPolicy())
            #expect(draft.checksum?.algorithm == algorithm)
            #expect(draft.checksum?.value == value.lowercased())
        }
    }

    @Test func checksumRefusalsSayWhatIsWrong() throws {
        let sha512 = String(repeating: "0", count: 128)
        func refused(_ change: @escaping (inout JobDraft.Body) -> Void, saying words: [String]) {
            let refusal = message(body("http://e.org/", change))
            #expect(refusal != nil)
            for word in words { #expect(refusal?.contains(word) == true, "\(refusal ?? "accepted") lacks \(word)") }
            #expect(code(body("http://e.org/", change)) == .invalidRequest)
        }
        refused({ $0.checksum = checksum("sha-3", sha512) }, saying: ["checksum.algorithm", "sha-3", "sha-256, sha-512, sha-1, md5"])
        refused({ $0.checksum = checksum("sha512", sha512) }, saying: ["checksum.algorithm", "sha512"])
        refused({ $0.checksum = checksum(nil, sha512) }, saying: ["checksum.algorithm", "required"])
        refused({ $0.checksum = checksum("sha-512", nil) }, saying: ["checksum.value", "required"])
        // A SHA-256's length for SHA-512: the message gives both lengths.
        refused({ $0.checksum = checksum("sha-512", String(repeating: "0", count: 64)) }, saying: ["checksum.value", "SHA-512", "128", "64"])
        refused({ $0.checksum = checksum("md5", String(repeating: "0", count: 40)) }, saying: ["MD5", "32", "40"])
        refused({ $0.checksum = checksum("sha-1", String(repeating: "g", count: 40)) }, saying: ["checksum.value", "hexadecimal"])
        refused({ $0.checksum = checksum("sha-1", "") }, saying: ["checksum.value", "hexadecimal"])
        refused({ $0.checksum = checksum("sha-1", " " + String(repeating: "0", count: 39)) }, saying: ["hexadecimal"])
        // sha256 and checksum together: only when they say the same.
        let sha = String(repeating: "c", count: 64)
        refused({ $0.sha256 = sha; $0.checksum = checksum("sha-256", String(repeating: "d", count: 64)) }, saying: ["sha256", "checksum", "different"])
        refused({ $0.sha256 = sha; $0.checksum = checksum("sha-512", sha512) }, saying: ["sha256", "checksum", "give one"])
        let same = try JobDraft.validate(body("http://e.org/") { $0.sha256 = sha.uppercased(); $0.checksum = checksum("sha-256", sha) },
                                         destinations: AddressPolicy())
        #expect(same.checksum == (try Checksum(algorithm: .sha256, value: sha)))
    }
}
