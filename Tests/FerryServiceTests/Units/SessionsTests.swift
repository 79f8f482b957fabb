import FerryStore
import FerryTestSupport
import Foundation
import Logging
import Testing
@testable import FerryService

/// `Sessions` over a real SQLite store and a spool directory: logouts that outlive restarts, the secret's file,
/// rotation, and what happens when the store fails or too many logouts pile up.
@Suite("Sessions")
struct SessionsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let logger: Logger = {
        var logger = Logger(label: "sessions-test")
        logger.logLevel = .critical
        return logger
    }()

    func open(_ spool: String, _ store: any JobStore, token: String = "t",
              capacity: Int = RevokedSessions.defaultCapacity) async throws -> Sessions {
        try await Sessions.open(token: token, spool: spool, store: store, logger: logger, capacity: capacity, now: now)
    }

    /// The cookie's value in a `Set-Cookie` header.
    func value(_ setCookie: String) throws -> String {
        try #require(SessionCookie.value(inCookieHeader: String(setCookie.split(separator: ";")[0])))
    }

    @Test func aLogoutIsDurableWhenRevokeReturnsAndOutlivesARestart() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        let store = try await SQLiteJobStore(path: spool + "/ferry.db")
        let sessions = try await open(spool, store)
        let out = try value(sessions.issue(now: now))
        let kept = try value(sessions.issue(now: now))
        try await sessions.revoke(out, now: now)
        #expect(sessions.verify(out, now: now) == nil)
        #expect(sessions.verify(kept, now: now) != nil)

        // A second connection, opened while the first is still open (as after a crash): the logout is on disk.
        let reopened = try await SQLiteJobStore(path: spool + "/ferry.db")
        let restarted = try await open(spool, reopened)
        #expect(restarted.verify(out, now: now) == nil, "a logged-out cookie stays refused after a restart")
        #expect(restarted.verify(kept, now: now) != nil, "other sessions survive the restart")
        await reopened.close()
        await store.close()
    }

    @Test func theSecretIsKeptPrivateInTheSpoolAndDeletingItEndsEverySession() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        let store = MemoryJobStore()
        let cookie = try value(try await open(spool, store).issue(now: now))
        let path = SessionSecret.path(spool: spool)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        let secret = try #require(PrivateFile.load(path))
        #expect(secret.count == 64)
        #expect(try await open(spool, store).verify(cookie, now: now) != nil, "the same secret at the next start")

        try FileManager.default.removeItem(atPath: path)
        let rotated = try await open(spool, store)
        #expect(rotated.verify(cookie, now: now) == nil)
        #expect(PrivateFile.load(path) != secret)
        let fresh = try value(rotated.issue(now: now))
        #expect(rotated.verify(fresh, now: now) != nil)
        #expect(try await open(spool, store, token: "changed").verify(fresh, now: now) == nil, "a new token ends sessions too")
    }

    @Test func tooManyLiveLogoutsRotateTheSecretRatherThanForgetOne() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        let store = MemoryJobStore()
        let sessions = try await open(spool, store, capacity: 2)
        let secret = PrivateFile.load(SessionSecret.path(spool: spool))
        let cookies = try (0..<4).map { _ in try value(sessions.issue(now: now)) }
        try await sessions.revoke(cookies[0], now: now)
        try await sessions.revoke(cookies[1], now: now)
        #expect(await store.revokedSessions(expiringAfter: now).count == 2)
        #expect(sessions.verify(cookies[3], now: now) != nil)

        try await sessions.revoke(cookies[2], now: now)
        for cookie in cookies { #expect(sessions.verify(cookie, now: now) == nil) }
        #expect(PrivateFile.load(SessionSecret.path(spool: spool)) != secret, "a new secret in the spool")
        #expect(await store.revokedSessions(expiringAfter: now).isEmpty, "nothing left to remember")
        let fresh = try value(sessions.issue(now: now))
        #expect(sessions.verify(fresh, now: now) != nil)
        let restarted = try await open(spool, store, capacity: 2)
        #expect(restarted.verify(fresh, now: now) != nil)
        #expect(restarted.verify(cookies[3], now: now) == nil)
    }

    @Test func aLogoutThatCannotBeSavedIsReportedAndStillRefusedHere() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        let store = try await SQLiteJobStore(path: spool + "/ferry.db")
        let sessions = try await open(spool, store)
        let cookie = try value(sessions.issue(now: now))
        await store.close()
        do {
            try await sessions.revoke(cookie, now: now)
            Issue.record("a logout the store refused was answered as done")
        } catch {
            // The API answers it with 503 (AccessGuard.logout); here the domain error names the store's reason.
            #expect(error.message.contains("the job store is closed"), "the store's reason is passed on: \(error.message)")
        }
        #expect(sessions.verify(cookie, now: now) == nil)
    }

    @Test func forgedAndExpiredCookiesNeedNoRevocation() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        let store = MemoryJobStore()
        let sessions = try await open(spool, store)
        let cookie = try value(sessions.issue(now: now))
        try await sessions.revoke("v1.9999999999.00.00", now: now)
        try await sessions.revoke(cookie, now: now.addingTimeInterval(SessionCookie.lifetime))
        #expect(await store.revokedSessions(expiringAfter: .distantPast).isEmpty)
    }

    @Test func expiredRevocationsArePurgedAtStart() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        let store = MemoryJobStore()
        await store.saveRevokedSession(RevokedSession(nonce: "gone", expiresAt: now.addingTimeInterval(-1)))
        await store.saveRevokedSession(RevokedSession(nonce: "live", expiresAt: now.addingTimeInterval(60)))
        _ = try await open(spool, store)
        #expect(await store.revokedSessions(expiringAfter: .distantPast).map(\.nonce) == ["live"])
    }

    @Test func aSecretTooShortToTrustIsRefusedNotReplaced() async throws {
        let spool = try Fixture.tempDirectory("ferry-sessions")
        defer { Fixture.removeTree(spool) }
        try PrivateFile.save("short", at: SessionSecret.path(spool: spool))
        await #expect(throws: ServiceError.self) { _ = try await open(spool, MemoryJobStore()) }
        #expect(PrivateFile.load(SessionSecret.path(spool: spool)) == "short")
    }

    @Test func privateFilesAreWrittenWithOwnerOnlyModeEvenOverALeftover() throws {
        let spool = try Fixture.tempDirectory("ferry-private")
        defer { Fixture.removeTree(spool) }
        let path = spool + "/secret"
        #expect(FileManager.default.createFile(atPath: path + ".tmp", contents: Data("old".utf8),
                                               attributes: [.posixPermissions: 0o644]))
        try PrivateFile.save("new", at: path)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(PrivateFile.load(path) == "new")
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        #expect(throws: ServiceError.self) { try PrivateFile.save("x", at: spool + "/missing/secret") }
    }
}
