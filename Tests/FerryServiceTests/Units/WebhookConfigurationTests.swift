import FerryCore
import Foundation
import Testing
@testable import FerryService

/// `--webhook-url`, `--webhook-secret` and their variables; the test-only retry base.
@Suite("Webhook configuration")
struct WebhookConfigurationTests {
    @Test func urlAndSecretFromFlagsOrVariables() throws {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
        let fromFlags = try ServiceConfiguration.resolve(
            flags: [.webhookURL: "HTTPS://u:p@Hooks.Example/in?a=1", .webhookSecret: secret], environment: [:])
        #expect(fromFlags.webhookURL == "https://u:p@hooks.example/in?a=1")
        #expect(fromFlags.webhookSecret == secret)
        #expect(fromFlags.webhookRetryBase == 5)
        let fromEnvironment = try ServiceConfiguration.resolve(flags: [:], environment: [
            "FERRY_WEBHOOK_URL": "http://hooks.example/x", "FERRY_WEBHOOK_SECRET": secret, "FERRY_WEBHOOK_RETRY_BASE": "0.25",
        ])
        #expect(fromEnvironment.webhookURL == "http://hooks.example/x" && fromEnvironment.webhookRetryBase == 0.25)
        #expect(ServiceConfiguration.Setting.webhookURL.environmentName == "FERRY_WEBHOOK_URL")
        #expect(ServiceConfiguration.Setting.webhookSecret.environmentName == "FERRY_WEBHOOK_SECRET")
    }

    @Test func badValuesStopTheStart() {
        for flags: [ServiceConfiguration.Setting: String] in [
            [.webhookURL: "ftp://hooks.example/x"],
            [.webhookURL: "not a url"],
            [.webhookURL: "http://127.0.0.1:9/x"],  // the destination guard, without --allow-network
            [.webhookURL: "http://localhost/x"],
            [.webhookSecret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
            [.webhookSecret: "whsec_***"],
        ] {
            #expect(throws: ConfigurationError.self) { _ = try ServiceConfiguration.resolve(flags: flags, environment: [:]) }
        }
        // The secret is never echoed in the error.
        do {
            _ = try ServiceConfiguration.resolve(flags: [.webhookSecret: "whsec_sec ret"], environment: [:])
        } catch {
            #expect(!error.description.contains("sec ret"))
        }
    }

    @Test func aPrivateReceiverIsAllowedWithItsNetwork() throws {
        let configuration = try ServiceConfiguration.resolve(
            flags: [.webhookURL: "http://127.0.0.1:9/x", .allowNetwork: "127.0.0.1/32"], environment: [:])
        #expect(configuration.webhookURL == "http://127.0.0.1:9/x")
    }
}
