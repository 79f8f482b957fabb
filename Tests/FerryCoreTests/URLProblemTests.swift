import Testing
@testable import FerryCore

@Suite struct URLProblemTests {
    @Test func equalityComparesCaseAndMessage() {
        #expect(URLProblem.invalid("a") == .invalid("a"))
        #expect(URLProblem.invalid("a") != .invalid("b"))
        #expect(URLProblem.unsupportedScheme("ftp") != .invalid("ftp"))
    }

    @Test func parseThrowsTypedErrors() {
        #expect(throws: URLProblem.unsupportedScheme("ftp")) { try SubmittedURL.parse("ftp://example.com/") }
        #expect(throws: URLProblem.invalid("the URL is empty")) { try SubmittedURL.parse("") }
    }
}
