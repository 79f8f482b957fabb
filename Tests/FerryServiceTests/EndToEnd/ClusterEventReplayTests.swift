import FerryService
import FerryStore
import FerryTestSupport
import Foundation
import Testing

/// A client that switches nodes with `Last-Event-ID` (API.md, "Events" and "Several nodes"): whatever node it
/// reconnects to, and at whatever point of a job's life, it is sent only events after that id, none twice. The
/// node it reconnects to may not have read the event named in `Last-Event-ID` from the store yet (issue 35: it
/// answered `reset` and then sent that very event live). Left out with `FERRY_SKIP_POSTGRES=1`.
@Suite("Reconnecting to another node", .enabled(if: !PostgresServer.isSkipped), .serialized)
struct ClusterEventReplayTests {
    @Test func aReconnectToAnotherNodeSendsOnlyLaterEventsAtEveryPointOfAJob() async throws {
        // Two nodes on a fresh database (the same set-up as the other cluster tests).
        try await ClusterNodesTests().withNodes(2) { nodes, _ in
            try await withNginx { nginx in
                try Fixture.writeFile(at: nginx.root + "/small.bin", size: 65_536, seed: 35)
                var reconnects = 0
                for round in 0..<6 {
                    let watched = nodes[round % 2], other = nodes[1 - round % 2]
                    let mark = try #require(try await watched.client.get("/api/v1/jobs").header("Ferry-Event-Id"))
                    let stream = try await watched.client.events("/api/v1/events?interval=100", headers: ["Last-Event-ID": mark])
                    // Alternate which node takes the request; either may run the job.
                    let created = try await nodes[round % 2].client.json("POST", "/api/v1/jobs", [
                        "url": nginx.url("/small.bin?round=\(round)"), "dedupe": false,
                    ])
                    let id = try #require(try created.json()["id"] as? String)
                    // Reconnect to the other node after each of this job's `job` events, the finished one included.
                    let seen = try await stream.collect(timeout: 30) { event in
                        event.event == "job" && event.data.contains(id) && event.data.contains(#""state":"finished""#)
                    }
                    for event in seen where event.event == "job" && event.data.contains(id) {
                        let lastID = try #require(event.id.flatMap { Int64($0) })
                        let resumed = try await other.client.events("/api/v1/events?interval=100",
                                                                    headers: ["Last-Event-ID": String(lastID)])
                        let after = try await Self.read(resumed, for: 1.5)
                        reconnects += 1
                        #expect(!after.contains { $0.event == "reset" }, "round \(round): a reset after \(lastID) (\(after.map(\.event)))")
                        let numbers = after.compactMap { $0.id.flatMap { Int64($0) } }
                        #expect(numbers.allSatisfy { $0 > lastID }, "round \(round): after \(lastID) came \(numbers)")
                        #expect(Set(numbers).count == numbers.count, "round \(round): repeated ids \(numbers)")
                    }
                }
                #expect(reconnects >= 12)
            }
        }
    }

    /// The events a stream sends within `seconds` (its pings are comments, not events).
    static func read(_ stream: EventReader, for seconds: Double) async throws -> [SSEvent] {
        var events: [SSEvent] = []
        let deadline = Date().addingTimeInterval(seconds)
        while deadline.timeIntervalSinceNow > 0.05 {
            do {
                guard let event = try await stream.next(timeout: deadline.timeIntervalSinceNow) else { break }
                events.append(event)
            } catch TestClientError.timeout(_) {
                break
            }
        }
        return events
    }
}
