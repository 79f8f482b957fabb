import FerryTestSupport
import Foundation
import Testing
@testable import FerryStore

/// `PostgresListener` against a real PostgreSQL: notifications sent by another connection arrive on commit and only
/// then, commands reach the node they name, and a restarted server is listened to again, saying so.
@Suite("PostgresListener", .enabled(if: !PostgresServer.isSkipped))
struct PostgresListenerTests {
    @Test func notificationsArriveOnCommitAndNotOnRollback() async throws {
        let server = try await PostgresServer.shared()
        let name = try await server.createDatabase()
        defer { server.dropDatabase(name) }
        let location = try #require(PostgresLocation(server.url(database: name)))
        let store = try await PostgresJobStore(location: location)
        let heard = Heard()
        let listener = PostgresListener(location: location, channels: ClusterChannel.all, handler: heard.append)
        listener.start()
        try await heard.wait(for: .listening(reconnected: false))

        // Rolled back: never delivered. Committed afterwards: delivered (in commit order, so once the committed one
        // is here the rolled-back one would have been too).
        try await server.administer("BEGIN; SELECT pg_notify('ferry_jobs', 'rolled-back'); ROLLBACK", database: name)
        let commit = try await store.commit(ClusterChange(
            inserts: [.make("a"), .make("b")], events: [NewEvent(jobID: "a", kind: .job, data: [1]),
                                                      NewEvent(jobID: "b", kind: .job, data: [2])]), node: "n1")
        let last = try #require(commit.events.last?.id)
        try await heard.wait(for: .notification(channel: ClusterChannel.events, payload: String(last)))
        #expect(heard.events.contains(.notification(channel: ClusterChannel.jobs, payload: "a,b")))
        #expect(!heard.events.contains(.notification(channel: ClusterChannel.jobs, payload: "rolled-back")))

        // A command for one node: every listener hears it, only that node's decodes it.
        try await store.send(command: "pause a", to: "n2")
        let payload = ClusterChannel.commandPayload("pause a", to: "n2")
        try await heard.wait(for: .notification(channel: ClusterChannel.commands, payload: payload))
        #expect(ClusterChannel.command(inPayload: payload, for: "n2") == "pause a")
        #expect(ClusterChannel.command(inPayload: payload, for: "n1") == nil)

        await listener.stop()
        let count = heard.events.count
        _ = try await store.commit(ClusterChange(events: [NewEvent(jobID: "a", kind: .job, data: [3])]), node: "n1")
        try await Task.sleep(for: .milliseconds(300))
        #expect(heard.events.count == count, "an event after stop()")
        await store.close()
    }

    @Test func aRestartedServerIsListenedToAgainAndSaysSo() async throws {
        let server = try await PostgresServer.startPrivate()
        defer { server.stop() }
        let name = try await server.createDatabase()
        let location = try #require(PostgresLocation(server.url(database: name)))
        let heard = Heard()
        let listener = PostgresListener(location: location, channels: [ClusterChannel.events],
                                        schedule: ReconnectSchedule(first: .milliseconds(50), longest: .milliseconds(500)),
                                        handler: heard.append)
        listener.start()
        try await heard.wait(for: .listening(reconnected: false))

        try await server.restart()
        try await heard.wait(timeout: 30) { if case .lost(let error) = $0 { error.isUnavailable } else { false } }
        try await heard.wait(for: .listening(reconnected: true), timeout: 30)
        // Listening again: a commit made now arrives.
        let store = try await PostgresJobStore(location: location)
        let commit = try await store.commit(ClusterChange(events: [NewEvent(jobID: "a", kind: .job, data: [])]), node: "n1")
        try await heard.wait(for: .notification(channel: ClusterChannel.events, payload: String(try #require(commit.events.first?.id))))
        await store.close()
        await listener.stop()
    }
}

/// What a listener's handler received, in order; read from any task.
private final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var received: [PostgresListener.Event] = []

    var events: [PostgresListener.Event] { lock.withLock { received } }

    func append(_ event: PostgresListener.Event) {
        lock.withLock { received.append(event) }
    }

    // 30 s: in a fresh-clone run of the whole parallel suite on 2 cores the listener's first connect and LISTEN took
    // over 10 s, the test server busy with every other test's database.
    func wait(for event: PostgresListener.Event, timeout: Double = 30) async throws {
        try await wait(timeout: timeout) { $0 == event }
    }

    /// Returns once an event matching `predicate` was received; fails the test after `timeout` seconds.
    func wait(timeout: Double = 30, _ predicate: (PostgresListener.Event) -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if events.contains(where: predicate) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("not received within \(timeout) s; received: \(events)")
        throw CancellationError()
    }
}
