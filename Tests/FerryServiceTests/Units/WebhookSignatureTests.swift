import Foundation
import Testing
@testable import FerryService

/// Standard Webhooks signing, against the specification's published example, and the secret's format.
@Suite("Webhook signature")
struct WebhookSignatureTests {
    /// The example of the Standard Webhooks specification and its reference libraries.
    @Test func signsTheSpecificationsExample() throws {
        let secret = try #require(WebhookSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
        let signature = WebhookSignature.sign(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
                                              body: Array(#"{"test": 2432232314}"#.utf8), key: secret.key)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        let headers = WebhookSignature.headers(id: "msg_1", timestamp: 5, body: [], key: secret.key)
        #expect(headers.contains("webhook-id: msg_1") && headers.contains("webhook-timestamp: 5")
            && headers.contains("Content-Type: application/json"))
        #expect(headers.contains { $0.hasPrefix("webhook-signature: v1,") })
    }

    @Test func secretsAreWhsecAndBase64() throws {
        #expect(WebhookSecret("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") == nil)  // no prefix
        #expect(WebhookSecret("whsec_") == nil)
        #expect(WebhookSecret("whsec_not base64!") == nil)
        #expect(WebhookSecret("whsec_YWJj=") == nil)  // length not a multiple of 4
        #expect(WebhookSecret("whsec_YW=j") == nil)  // padding in the middle
        #expect(WebhookSecret("whsec_YWI=")?.key == Array("ab".utf8))
        #expect(WebhookSecret("whsec_YQ==")?.key == Array("a".utf8))
        let made = WebhookSecret(key: Array(0...31))
        #expect(WebhookSecret(made.text) == made)
    }

    @Test func base64RoundTrips() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let text = Base64.encode(bytes)
            #expect(text == Data(bytes).base64EncodedString())
            #expect(Base64.decode(text) == bytes)
        }
    }
}
