import Testing
@testable import FerryService

@Test func FerryServiceBuilds() { #expect(Bool(true)) }
