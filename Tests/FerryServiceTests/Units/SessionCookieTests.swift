import Foundation
import Testing
@testable import FerryService

@Suite("Session cookies")
struct SessionCookieTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let secret = String(repeating: "5e", count: 32)

    @Test func issuedCookiesVerifyUntilTheyExpire() throws {
        let cookies = SessionCookie(token: "t", secret: secret)
        let value = cookies.issue(now: now, nonce: [1, 2, 3])
        let claims = try #require(cookies.verify(value, now: now))
        #expect(claims == SessionCookie.Claims(nonce: "010203", expiresAt: now.addingTimeInterval(SessionCookie.lifetime)))
        #expect(cookies.verify(value, now: now.addingTimeInterval(SessionCookie.lifetime - 1)) == claims)
        #expect(cookies.verify(value, now: now.addingTimeInterval(SessionCookie.lifetime)) == nil)
    }

    @Test func aChangedTokenOrTamperedValueIsRefused() {
        let cookies = SessionCookie(token: "t", secret: secret)
        let value = cookies.issue(now: now)
        #expect(SessionCookie(token: "other", secret: secret).verify(value, now: now) == nil)
        var parts = value.split(separator: ".").map(String.init)
        parts[1] = String(Int(parts[1])! + 1_000_000)
        #expect(cookies.verify(parts.joined(separator: "."), now: now) == nil)
        #expect(cookies.verify("garbage", now: now) == nil)
        #expect(cookies.verify("", now: now) == nil)
    }

    @Test func aRotatedSecretRefusesEveryEarlierCookie() {
        let value = SessionCookie(token: "t", secret: secret).issue(now: now)
        #expect(SessionCookie(token: "t", secret: secret).verify(value, now: now) != nil, "the same secret and token")
        #expect(SessionCookie(token: "t", secret: String(repeating: "a7", count: 32)).verify(value, now: now) == nil)
    }

    @Test func cookieHeaderParsing() {
        #expect(SessionCookie.value(inCookieHeader: "a=1; ferry_session=xyz; b=2") == "xyz")
        #expect(SessionCookie.value(inCookieHeader: "ferry_sessionx=1") == nil)
        #expect(SessionCookie(token: "t", secret: secret).setCookieHeader("v").contains("HttpOnly; SameSite=Strict"))
    }

    @Test func constantTimeEqualityIsEquality() {
        #expect(Secret.constantTimeEqual("abc", "abc"))
        #expect(!Secret.constantTimeEqual("abc", "abd"))
        #expect(!Secret.constantTimeEqual("abc", "abcd"))
        #expect(Secret.sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
