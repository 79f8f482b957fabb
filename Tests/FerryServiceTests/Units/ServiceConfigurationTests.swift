import FerryCore
import Testing
@testable import FerryService

@Suite("Configuration from flags and environment")
struct ServiceConfigurationTests {
    @Test func defaultsMatchTheContract() throws {
        let configuration = try ServiceConfiguration.resolve(flags: [:], environment: [:])
        #expect(configuration.host == "127.0.0.1" && configuration.port == 8080 && configuration.spool == "./spool")
        #expect(configuration.token == nil && configuration.maxConcurrent == 4 && !configuration.allowPrivateNetworks)
        #expect(configuration.minFreeSpace == 1 << 30 && configuration.maxFileSize == nil && configuration.retention == nil)
        #expect(configuration.isLoopbackHost)
    }

    @Test func environmentTwinsAndFlagsWin() throws {
        let environment = ["FERRY_PORT": "9000", "FERRY_MAX_CONCURRENT": "8", "FERRY_ALLOW_PRIVATE_NETWORKS": "1",
                           "FERRY_MIN_FREE_SPACE": "500M", "FERRY_MAX_FILE_SIZE": "2GiB", "FERRY_RETENTION": "7d",
                           "FERRY_HOST": "0.0.0.0", "FERRY_TOKEN": "env-token"]
        let configuration = try ServiceConfiguration.resolve(flags: [.port: "9100", .token: "flag-token"], environment: environment)
        #expect(configuration.port == 9100 && configuration.token == "flag-token")
        #expect(configuration.maxConcurrent == 8 && configuration.allowPrivateNetworks)
        #expect(configuration.minFreeSpace == 500_000_000 && configuration.maxFileSize == 2 << 30)
        #expect(configuration.retention == Double(7 * 86_400))
        #expect(try ServiceConfiguration.resolve(flags: [.maxPerHost: "16"], environment: [:]).maxPerHost == 16)
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_MAX_PER_HOST": "12"]).maxPerHost == 12)
        #expect(try ServiceConfiguration.resolve(flags: [:], environment: [:]).maxPerHost == 6)
        #expect(!configuration.isLoopbackHost)
    }

    @Test func nodeIDAndLease() throws {
        let defaults = try ServiceConfiguration.resolve(flags: [:], environment: [:])
        #expect(defaults.nodeID == ServiceConfiguration.hostName && !defaults.nodeID.isEmpty)
        #expect(defaults.lease == .seconds(15) && defaults.objectStore == nil && !defaults.allowsNodesWithoutObjectStore)
        let given = try ServiceConfiguration.resolve(flags: [.nodeID: "node-b"],
                                                     environment: ["FERRY_NODE_ID": "node-a", "FERRY_LEASE": "2.5s"])
        #expect(given.nodeID == "node-b" && given.lease == .milliseconds(2500))
        for (setting, value) in [(ServiceConfiguration.Setting.nodeID, "a,b"), (.nodeID, "a\nb"), (.lease, "0.5s"), (.lease, "2h"), (.lease, "soon")] {
            #expect(throws: ConfigurationError.self, "\(setting) \(value)") {
                try ServiceConfiguration.resolve(flags: [setting: value], environment: [:])
            }
        }
    }

    @Test func allowNetworkIsRepeatableAndAListInItsVariable() throws {
        let fromFlags = try ServiceConfiguration.resolve(flags: [.allowNetwork: "127.0.0.1/32,10.1.0.0/16"], environment: [:])
        #expect(fromFlags.destinations.allowedNetworks.map(\.description) == ["127.0.0.1/32", "10.1.0.0/16"])
        #expect(!fromFlags.allowPrivateNetworks)
        let fromEnvironment = try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_ALLOW_NETWORKS": "::1/128, 127.0.0.0/8"])
        #expect(fromEnvironment.destinations.allowedNetworks.map(\.description) == ["::1/128", "127.0.0.0/8"])
        #expect(ServiceConfiguration.Setting.allowNetwork.environmentName == "FERRY_ALLOW_NETWORKS")
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.allowNetwork: "10.1.2.3/16"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_ALLOW_NETWORKS": "lan"]) }
    }

    @Test func badValuesNameTheSetting() {
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.port: "http"], environment: [:]) }
        do {
            _ = try ServiceConfiguration.resolve(flags: [:], environment: ["FERRY_MIN_FREE_SPACE": "lots"])
            Issue.record("accepted a bad size")
        } catch {
            #expect(error.setting == "FERRY_MIN_FREE_SPACE")
        }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.retention: "soon"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.maxConcurrent: "0"], environment: [:]) }
        #expect(throws: ConfigurationError.self) { try ServiceConfiguration.resolve(flags: [.maxPerHost: "65"], environment: [:]) }
    }

    @Test func loopbackHosts() {
        for host in ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"] {
            var configuration = ServiceConfiguration()
            configuration.host = host
            #expect(configuration.isLoopbackHost, "\(host)")
        }
        for host in ["0.0.0.0", "::", "192.168.1.5", "example.org"] {
            var configuration = ServiceConfiguration()
            configuration.host = host
            #expect(!configuration.isLoopbackHost, "\(host)")
        }
    }
}
