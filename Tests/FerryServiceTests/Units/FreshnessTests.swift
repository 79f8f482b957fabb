import FerryCore
import Foundation
import Testing
@testable import FerryService

@Suite("Fetch-through: freshness")
struct FreshnessTests {
    private let received = Date(timeIntervalSince1970: 1_800_000_000)
    private var settings: FetchSettings {
        var settings = FetchSettings()
        settings.maxAge = 3600
        settings.staleIfError = 86_400
        return settings
    }

    private func policy(_ cacheControl: String?, expires: String? = nil, date: String? = nil) -> OriginCachePolicy {
        OriginCachePolicy.parse(cacheControl: cacheControl, expires: expires, date: date, receivedAt: received)
    }

    @Test func maxAgeAndSharedMaxAge() {
        #expect(policy("max-age=60").lifetime(defaultMaxAge: 3600) == 60)
        #expect(policy("public, max-age=60, s-maxage=600").lifetime(defaultMaxAge: 3600) == 600)
        #expect(policy("max-age=\"120\"").lifetime(defaultMaxAge: 3600) == 120)
        #expect(policy("max-age=abc").lifetime(defaultMaxAge: 3600) == 0)
        #expect(policy("max-age=99999999999999").lifetime(defaultMaxAge: 3600) == 2_147_483_648)
        #expect(policy(nil).lifetime(defaultMaxAge: 3600) == 3600)
        #expect(policy("public").lifetime(defaultMaxAge: 1800) == 1800)
    }

    @Test func expiresCountsFromTheOriginsDate() {
        let date = HTTPDate.format(received.addingTimeInterval(-100))
        let expires = HTTPDate.format(received.addingTimeInterval(200))
        #expect(policy(nil, expires: expires, date: date).lifetime(defaultMaxAge: 3600) == 300)
        #expect(policy(nil, expires: expires).lifetime(defaultMaxAge: 3600) == 200)
        #expect(policy(nil, expires: "0").lifetime(defaultMaxAge: 3600) == 0)
        #expect(policy("max-age=5", expires: expires).lifetime(defaultMaxAge: 3600) == 5)
    }

    @Test func noCacheNoStoreAndPrivate() {
        #expect(policy("no-cache, max-age=600").lifetime(defaultMaxAge: 3600) == 0)
        #expect(policy("no-cache").noStore == false)
        #expect(policy("no-store").noStore)
        #expect(policy("private, max-age=60").noStore)
        #expect(policy("NO-STORE").noStore)
        #expect(!policy("max-age=60").noStore)
    }

    @Test func freshThenRevalidateThenNoLongerStale() {
        let freshness = Freshness(policy: policy("max-age=60"), receivedAt: received, settings: settings)
        #expect(freshness.decision(at: received) == .fresh)
        #expect(freshness.decision(at: received.addingTimeInterval(59.9)) == .fresh)
        #expect(freshness.decision(at: received.addingTimeInterval(60)) == .revalidate(mayServeStale: true))
        #expect(freshness.decision(at: received.addingTimeInterval(60 + 86_399)) == .revalidate(mayServeStale: true))
        #expect(freshness.decision(at: received.addingTimeInterval(60 + 86_400)) == .revalidate(mayServeStale: false))
        let always = Freshness(policy: policy("no-cache"), receivedAt: received, settings: settings)
        #expect(always.decision(at: received) == .revalidate(mayServeStale: true))
        let byDefault = Freshness(policy: policy(nil), receivedAt: received, settings: settings)
        #expect(byDefault.freshUntil == received.addingTimeInterval(3600))
    }
}
