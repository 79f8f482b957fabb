import FerryTestSupport
import Foundation
import Testing

/// Server-Sent Events: replay, handshake, per-job streams, slow subscribers.
@Suite("Event streams, end to end", .serialized)
struct EventStreamTests {
    @Test func streamStartsWithRetryAndCarriesJobEventsInIdOrder() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/e.bin", size: 200_000, seed: 1)
            try await withFerry { ferry in
                let stream = try await ferry.client.events("/api/v1/events?interval=100")
                #expect(stream.status == 200)
                let id = try #require(try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/e.bin")]).json()["id"] as? String)
                // A job that asked no checksum is `finished` once whole; its `sha256` may follow in a later `job` event.
                let events = try await stream.collect { event in
                    guard event.event == "job", let job = try? event.json() else { return false }
                    return job["state"] as? String == "finished" && job["sha256"] is String
                }
                #expect(stream.retry == 2000)
                let ids = events.compactMap { $0.id.flatMap(Int64.init) }
                #expect(ids.count == events.count, "every event carries an id")
                #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids strictly increase")
                let jobEvents = events.filter { $0.event == "job" }
                #expect(try jobEvents.first?.json()["id"] as? String == id)
                #expect(try jobEvents.first?.json()["state"] as? String == "waiting")
                let final = try #require(jobEvents.last).json()
                #expect(final["bytesReceived"] as? Int == 200_000)
                #expect(final["sha256"] as? String == Fixture.sha256Hex(of: Fixture.content(size: 200_000, seed: 1)))
            }
        }
    }

    /// `interval=100` gives up to ten progress events a second for a steadily downloading job (the engine samples
    /// at the finest interval any stream asks for; it sampled every 250 ms, so at most four came), and never more.
    ///
    /// What a loaded machine can still tell: the job is paced at 1 MB/s, so the bytes between two events measure
    /// their spacing (100 ms is 100 kB) however late this test reads them. A starved process delays some samples
    /// (wider gaps), never brings two closer, so the test looks over six seconds of the download (1 MB to 7 MB) for a
    /// few pairs closer than the old floor allowed, and bounds the count by the interval.
    @Test func intervalOf100MillisecondsIsHonoured() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/steady.bin", size: 8 * 1024 * 1024, seed: 2)
            try await withFerry { ferry in
                let all = try await ferry.client.events("/api/v1/events?interval=100")
                let id = try #require(try await ferry.client.json("POST", "/api/v1/jobs", [
                    "url": nginx.url("/steady.bin"), "connections": 1, "maxBytesPerSecond": 1_000_000,
                ]).json()["id"] as? String)
                let own = try await ferry.client.events("/api/v1/jobs/\(id)/events?interval=100")
                for (name, stream) in [("all jobs", all), ("one job", own)] {
                    var received: [Int] = []
                    let events = try await stream.collect(timeout: 40) { event in
                        guard event.event == "progress", let data = try? event.json(), data["id"] as? String == id,
                              let bytes = data["bytesReceived"] as? Int else { return false }
                        received.append(bytes)
                        return bytes > 7_000_000
                    }
                    #expect(!events.isEmpty)
                    let window = received.filter { $0 > 1_000_000 && $0 <= 7_000_000 }
                    // Under a 250 ms floor pairs are 250 kB apart; pairs at most 180 kB apart are closer than 180 ms.
                    // With a 100 ms interval most pairs are, a loaded machine still gives several in six seconds.
                    let close = zip(window, window.dropFirst()).filter { $1 - $0 <= 180_000 }.count
                    #expect(close >= 3, "\(name): \(close) of \(window.count) progress events closer than 180 ms: \(window)")
                    // At most one per 100 ms: six seconds hold at most 60 (and one at each end).
                    #expect(window.count <= 62, "\(name): \(window.count) progress events in 6 s")
                }
                _ = try await ferry.client.request("DELETE", "/api/v1/jobs/\(id)")
            }
        }
    }

    @Test func replayAfterDisconnectLosesAndDuplicatesNothing() async throws {
        try await withFerry { ferry in
            let client = ferry.client
            // The list + Ferry-Event-Id handshake.
            let list = try await client.get("/api/v1/jobs")
            let handshake = try #require(list.header("Ferry-Event-Id"))
            var created: [String] = []
            for index in 0..<5 {
                created.append(try #require(try await client.json("POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/r\(index)", "paused": true]).json()["id"] as? String))
            }
            let stream = try await client.events("/api/v1/events", headers: ["Last-Event-ID": handshake])
            let firstBatch = try await stream.collect(timeout: 10) { event in
                (try? event.json()["id"] as? String) == created.last
            }
            #expect(firstBatch.filter { $0.event == "job" }.compactMap { try? $0.json()["id"] as? String } == created)
            let lastSeen = try #require(firstBatch.last?.id)
            stream.connection.setTimeout(0.1)

            // Disconnect, change things, reconnect with Last-Event-ID.
            _ = try await client.request("POST", "/api/v1/jobs/\(created[0])/cancel")
            _ = try await client.request("DELETE", "/api/v1/jobs/\(created[1])")
            _ = try await client.json("PATCH", "/api/v1/jobs/\(created[2])", ["priority": 3])
            let again = try await client.events("/api/v1/events", headers: ["Last-Event-ID": lastSeen])
            let missed = try await again.collect(timeout: 10) { event in
                event.event == "job" && (try? event.json()["priority"] as? Int) == 3
            }
            #expect(missed.map(\.event) == ["job", "removed", "job"])
            #expect(try missed[0].json()["state"] as? String == "cancelled")
            #expect(try missed[1].json()["id"] as? String == created[1])
            #expect(missed.allSatisfy { Int64($0.id ?? "") ?? 0 > Int64(lastSeen)! })

            // The query parameter does the same for a page's first connection; the header wins over it.
            let viaQuery = try await client.events("/api/v1/events?lastEventId=\(lastSeen)")
            let same = try await viaQuery.collect(timeout: 10) { $0.event == "job" && (try? $0.json()["priority"] as? Int) == 3 }
            #expect(same.map(\.id) == missed.map(\.id))
        }
    }

    @Test func unknownLastEventIdGetsAReset() async throws {
        try await withFerry { ferry in
            let stream = try await ferry.client.events("/api/v1/events", headers: ["Last-Event-ID": "999999999999"])
            let first = try #require(try await stream.next(timeout: 5))
            #expect(first.event == "reset")
        }
    }

    @Test func perJobStreamStartsWithTheJobAndClosesAfterItEnds() async throws {
        try await withNginx { nginx in
            try Fixture.writeFile(at: nginx.root + "/j.bin", size: 100_000, seed: 2)
            try await withFerry { ferry in
                let client = ferry.client
                let id = try #require(try await client.json("POST", "/api/v1/jobs", ["url": nginx.url("/j.bin"), "paused": true]).json()["id"] as? String)
                let stream = try await client.events("/api/v1/jobs/\(id)/events")
                let first = try #require(try await stream.next(timeout: 5))
                #expect(first.event == "job")
                #expect(try first.json()["state"] as? String == "paused")
                _ = try await client.request("POST", "/api/v1/jobs/\(id)/resume")
                var last: SSEvent?
                while let event = try await stream.next(timeout: 20) { last = event }  // nil: the server closed the stream
                #expect(try last?.json()["state"] as? String == "finished")
                let lastID = try #require(last?.id)
                // Reconnecting after the end: 204 tells EventSource to stop.
                let after = try await client.request("GET", "/api/v1/jobs/\(id)/events", headers: ["Last-Event-ID": lastID])
                #expect(after.status == 204)
                // Without Last-Event-ID: the job event, then the end.
                let once = try await client.events("/api/v1/jobs/\(id)/events")
                #expect(try await once.next(timeout: 5)?.event == "job")
                #expect(try await once.next(timeout: 5) == nil)
                #expect(try await client.get("/api/v1/jobs/nope/events").status == 404)
            }
        }
    }

    @Test func aSubscriberThatNeverReadsDoesNotSlowADownload() async throws {
        try await withNginx { nginx in
            let size = 48 * 1024 * 1024
            try Fixture.writeFile(at: nginx.root + "/fast.bin", size: size, seed: 9)
            try await withFerry { ferry in
                // Open a stream with a tiny receive buffer and never read from it.
                let stuck = try TestConnection(port: ferry.port)
                var small: Int32 = 4096
                setsockopt(stuck.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                try stuck.send(TestConnection.requestBytes("GET", "/api/v1/events?interval=100", port: ferry.port, headers: [:], body: nil))
                let watcher = try await ferry.client.events("/api/v1/events?interval=100")
                let start = Date()
                let id = try #require(try await ferry.client.json("POST", "/api/v1/jobs", ["url": nginx.url("/fast.bin")]).json()["id"] as? String)
                let events = try await watcher.collect(timeout: 60) { event in
                    event.event == "job" && (try? event.json()["state"] as? String) == "finished"
                }
                let elapsed = Date().timeIntervalSince(start)
                #expect(try events.last?.json()["id"] as? String == id)
                #expect(elapsed < 30, "a 48 MiB loopback download took \(elapsed) s with a stuck subscriber")
                withExtendedLifetime(stuck) {}
            }
        }
    }

    /// Live streams of all jobs share one fan-out per interval; each must still see every job event once, in order.
    @Test func liveSubscribersOfOneIntervalReceiveTheSameEvents() async throws {
        try await withFerry { ferry in
            var streams: [EventReader] = []
            for index in 0..<6 {
                streams.append(try await ferry.client.events(index == 5 ? "/api/v1/events?interval=100" : "/api/v1/events"))
            }
            var created: [String] = []
            for index in 0..<5 {
                created.append(try #require(try await ferry.client.json(
                    "POST", "/api/v1/jobs", ["url": "http://127.0.0.1:9/s\(index)", "paused": true, "dedupe": false]).json()["id"] as? String))
            }
            var idLists: [[String?]] = []
            for stream in streams {
                let events = try await stream.collect(timeout: 10) { (try? $0.json()["id"] as? String) == created.last }
                #expect(events.filter { $0.event == "job" }.compactMap { try? $0.json()["id"] as? String } == created)
                idLists.append(events.map(\.id))
            }
            #expect(Set(idLists.map { $0.compactMap { $0 }.joined(separator: ",") }).count == 1, "\(idLists)")
        }
    }

    /// A live stream that stops reading while many jobs are created gets every job event once, in id order,
    /// when it reads again (it is sent the missed batches, or resynchronized from the log).
    @Test func aLiveSubscriberThatFallsBehindCatchesUpWithEveryJobEvent() async throws {
        try await withFerry { ferry in
            let port = ferry.port
            let reader = try await offThePool {
                let slow = try TestConnection(port: port, timeout: 20)
                var small: Int32 = 4096
                setsockopt(slow.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
                try slow.send(TestConnection.requestBytes("GET", "/api/v1/events", port: port, headers: [:], body: nil))
                return try EventReader(slow)
            }
            #expect(reader.status == 200)
            try await Task.sleep(for: .milliseconds(300))
            var created: [String] = []
            for round in 0..<2 {
                let batch = (0..<750).map { ["url": "http://127.0.0.1:9/b\(round)-\($0)", "paused": true, "dedupe": false] as [String: Any] }
                let jobs = try await ferry.client.json("POST", "/api/v1/jobs", batch).jsonArray()
                created += jobs.compactMap { $0["id"] as? String }
            }
            #expect(created.count == 1_500)
            let events = try await reader.collect(timeout: 150) { $0.event == "job" && (try? $0.json()["id"] as? String) == created.last }
            let ids = events.compactMap { $0.id.flatMap(Int64.init) }
            #expect(ids.count == events.count)
            #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids strictly increase")
            let jobIDs = events.filter { $0.event == "job" }.compactMap { try? $0.json()["id"] as? String }
            #expect(jobIDs.count == created.count)
            #expect(jobIDs == created)
        }
    }
}

extension SSEvent: Equatable {
    static func == (a: SSEvent, b: SSEvent) -> Bool { a.id == b.id && a.event == b.event && a.data == b.data }
}
