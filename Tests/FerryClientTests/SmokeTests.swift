import Testing
@testable import FerryClient

@Test func FerryClientBuilds() { #expect(Bool(true)) }
