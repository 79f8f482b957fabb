import FerryCore
import Testing
@testable import FerryService

@Suite("API errors")
struct APIErrorTests {
    @Test func urlProblemsBecomeSentences() {
        let scheme = APIError(URLProblem.unsupportedScheme("ftp"))
        #expect(scheme.code == .unsupportedScheme)
        #expect(scheme.message.hasPrefix("'ftp' URLs are not accepted here"))
        let invalid = APIError(URLProblem.invalid("port 70000 is out of range"))
        #expect(invalid.code == .invalidURL)
        #expect(invalid.status.code == 400)
    }
}
