import FerryCore
import Testing
@testable import FerryService

@Suite("Fetch-through: flags and variables")
struct FetchConfigurationTests {
    @Test func offByDefaultWithTheContractsDefaults() throws {
        let configuration = try ServiceConfiguration.resolve(flags: [:], environment: [:])
        #expect(!configuration.fetch.isOn)
        #expect(configuration.fetch.maxAge == 3600)
        #expect(configuration.fetch.staleIfError == 86_400)
        #expect(configuration.fetch.keyRule == .standard)
    }

    @Test func flagsWinOverTheirCommaListVariables() throws {
        let environment = ["FERRY_FETCH_ALLOW": "a.test,*.b.test", "FERRY_FETCH_MAX_AGE": "10m",
                           "FERRY_FETCH_STALE_IF_ERROR": "2h", "FERRY_CACHE_KEY_IGNORE": "token,session"]
        let fromEnvironment = try ServiceConfiguration.resolve(flags: [:], environment: environment)
        #expect(fromEnvironment.fetch.allow.patterns.count == 2)
        #expect(fromEnvironment.fetch.maxAge == 600)
        #expect(fromEnvironment.fetch.staleIfError == 7200)
        #expect(fromEnvironment.fetch.keyRule == CacheKeyRule(ignoring: ["token", "session"]))
        let flagged = try ServiceConfiguration.resolve(flags: [.fetchAllow: "*", .fetchMaxAge: "1s"], environment: environment)
        #expect(flagged.fetch.allow.patterns == [FetchAllowList.Pattern(host: .any, port: nil)])
        #expect(flagged.fetch.maxAge == 1)
    }

    @Test func badValuesNameTheSetting() {
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.fetchAllow: "http://x/"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.fetchMaxAge: "soon"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.cacheKeyIgnore: "a=b"], environment: [:]) }
        do {
            _ = try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_FETCH_ALLOW": "x.org/p"])
            Issue.record("accepted")
        } catch {
            #expect(error.setting == "FERRY_FETCH_ALLOW")
        }
    }
}
