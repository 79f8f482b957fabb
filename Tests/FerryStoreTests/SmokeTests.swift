import Testing
@testable import FerryStore

@Test func FerryStoreBuilds() { #expect(Bool(true)) }
