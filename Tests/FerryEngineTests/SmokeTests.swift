import Testing
@testable import FerryEngine

@Test func FerryEngineBuilds() { #expect(Bool(true)) }
