import Testing
@testable import FerryService

/// A node's part of a key's `maxBytesPerSecond` on several nodes (pure).
@Suite("Key rate shares")
struct KeyRateSharesTests {
    @Test func aNodeGetsThePartOfTheLimitItsJobsAreOfTheKeysRunningJobs() {
        #expect(KeyRateShares.share(of: 1_000, mine: 1, total: 4) == 250)
        #expect(KeyRateShares.share(of: 1_000, mine: 3, total: 4) == 750)
        #expect(KeyRateShares.share(of: 1_000, mine: 1, total: 3) == 333)
        #expect(KeyRateShares.share(of: 1_000, mine: 2, total: 2) == 1_000, "all of them here")
        #expect(KeyRateShares.share(of: 1_000, mine: 0, total: 5) == 1_000, "none here: the first to start gets all")
        #expect(KeyRateShares.share(of: 1_000, mine: 0, total: 0) == 1_000)
        #expect(KeyRateShares.share(of: 2, mine: 1, total: 1_000) == 1, "never 0 (no limit)")
    }
}
