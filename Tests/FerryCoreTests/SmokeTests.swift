import Testing
@testable import FerryCore

@Test func FerryCoreBuilds() { #expect(Bool(true)) }
