@testable import FerryClient
import Testing

@Suite("Server, token and errors")
struct SettingsAndErrorsTests {
    @Test func aFlagWinsOverItsVariableWhichWinsOverTheDefault() throws {
        let environment = ["FERRY_URL": "http://ferry.lan:9000/", "FERRY_TOKEN": "from-env"]
        let flags = try ServerEndpoint.resolve(server: "https://other:1/prefix/", token: "from-flag", environment: environment)
        #expect(flags.baseURL == "https://other:1/prefix")
        #expect(flags.token == "from-flag")
        let variables = try ServerEndpoint.resolve(server: nil, token: nil, environment: environment)
        #expect(variables.baseURL == "http://ferry.lan:9000")
        #expect(variables.token == "from-env")
        let defaults = try ServerEndpoint.resolve(server: nil, token: nil, environment: ["FERRY_URL": "", "FERRY_TOKEN": ""])
        #expect(defaults.baseURL == "http://127.0.0.1:8080")
        #expect(defaults.token == nil)
        #expect(defaults.url("/api/v1/jobs") == "http://127.0.0.1:8080/api/v1/jobs")
    }

    @Test func onlyHTTPServerURLs() {
        for bad in ["127.0.0.1:8080", "ftp://host", "http://", "http://host/?q=1", "http://host/#x"] {
            #expect(throws: ClientError.self, "\(bad)") { try ServerEndpoint(baseURL: bad, token: nil) }
        }
        #expect((try? ServerEndpoint(baseURL: "HTTP://Host:1", token: nil)) != nil)
    }

    @Test func errorsSayWhatTheAPISaid() {
        let body = Array(#"{"error":{"code":"not_found","message":"no job with id 'x'"}}"#.utf8)
        let error = FerryAPI.error(status: 404, body: body)
        #expect(error == .api(status: 404, code: "not_found", message: "no job with id 'x'"))
        #expect(error.description == "no job with id 'x' [not_found, HTTP 404]")
        #expect(error.code == "not_found")
        #expect(error.exitStatus == 1)
        let proxy = FerryAPI.error(status: 502, body: Array("<html>Bad gateway\u{1B}</html>".utf8))
        #expect(proxy == .unexpectedResponse(status: 502, detail: "<html>Bad gateway?</html>"))
        #expect(ClientError.usage("x").exitStatus == 64)
    }

    @Test func targetEncoding() {
        #expect(TargetEncoding.segment("a/b c%") == "a%2Fb%20c%25")
        #expect(TargetEncoding.segment("Az09-._~") == "Az09-._~")
        #expect(TargetEncoding.query([("state", "failed,paused"), ("after", nil), ("limit", "5")])
            == "?state=failed,paused&limit=5")
        #expect(TargetEncoding.query([("after", "a&b=c+d")]) == "?after=a%26b%3Dc%2Bd")
        #expect(TargetEncoding.query([("x", nil)]) == "")
        #expect(FerryAPI.jobPath("../x") == "/api/v1/jobs/..%2Fx")
    }
}
