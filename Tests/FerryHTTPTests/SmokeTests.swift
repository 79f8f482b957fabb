import Testing
@testable import FerryHTTP

@Test func FerryHTTPBuilds() { #expect(Bool(true)) }
