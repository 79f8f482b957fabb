import Dispatch
import Foundation
import Logging
import Synchronization
import Testing
@testable import FerryHTTP
@testable import FerryService

/// The hub's shared fan-out with streams that have no connection: what is written stays queued in the
/// stream (counted as unsent), so a test decides when a subscriber "reads" (`drain`).
@Suite struct EventHubTests {
    /// A stream no socket drains; `drain()` takes what is queued, as a connection sending it would.
    final class Sink: @unchecked Sendable {
        let queue = DispatchQueue(label: "test.stream")
        let stream: ResponseStream
        let writer: EventStreamWriter
        private var received: [UInt8] = []   // confined to `queue`

        init() {
            stream = ResponseStream(queue: queue)
            writer = EventStreamWriter(stream: stream, heartbeat: 0)
        }

        /// Everything written so far is "sent"; returns all bytes received since the start.
        @discardableResult
        func drain() -> [UInt8] {
            queue.sync {
                let chunks = stream.takePending(limit: .max)
                let size = chunks.reduce(0) { $0 + $1.count }
                for chunk in chunks { received += chunk }
                if size > 0 { stream.didSend(size) }
                return received
            }
        }

        /// The ids of the events received, in order, and the job ids of the `job` events among them.
        func events() -> (ids: [Int64], jobs: [String]) {
            let text = String(decoding: drain(), as: UTF8.self)
            var ids: [Int64] = []
            var jobs: [String] = []
            for frame in text.components(separatedBy: "\n\n") {
                let lines = frame.split(separator: "\n")
                guard let idLine = lines.first(where: { $0.hasPrefix("id: ") }) else { continue }
                ids.append(Int64(idLine.dropFirst(4))!)
                if lines.contains("event: job"), let data = lines.first(where: { $0.hasPrefix("data: ") }) {
                    jobs.append(String(data.dropFirst(6).prefix(while: { $0 != "|" })))
                }
            }
            return (ids, jobs)
        }
    }

    private func settle(_ hub: EventHub, _ sinks: [Sink]) {
        for _ in 0..<3 {
            hub.queue.sync {}
            hub.settleFanout()
            for sink in sinks { sink.queue.sync {} }
        }
    }

    /// Job events of about 2 KB: `data` is the job id, a bar, then padding.
    private func jobEvent(_ id: Int64, _ ids: EventIDAllocator) -> ServerEvent {
        let job = "job\(id)"
        return ServerEvent(id: id, kind: .job, jobID: job, data: Array((job + "|" + String(repeating: "x", count: 2_000)).utf8))
    }

    @Test func membersGetEveryEventOnceAndASlowOneCatchesUpOrIsResynchronized() throws {
        let ids = EventIDAllocator(startingAfter: 0)
        let hub = EventHub(ids: ids, logger: Logger(label: "test"), heartbeat: 0)
        let fast = Sink(), slow = Sink(), late = Sink()
        for sink in [fast, slow] {
            hub.subscribe(writer: sink.writer, stream: sink.stream, jobs: nil, intervalMilliseconds: 500, start: .live)
        }
        settle(hub, [fast, slow])
        var published: [String] = []
        func publish(_ count: Int) {
            for _ in 0..<count {
                let event = jobEvent(ids.next(), ids)
                published.append(event.jobID!)
                hub.publish([event])
            }
            settle(hub, [fast, slow, late])
        }
        // The slow one stops reading: beyond 16 KiB unsent the hub keeps only its cursor.
        for _ in 0..<10 { publish(2); fast.drain() }
        #expect(slow.stream.bufferedByteCount < 16 * 1024 + 4 * 2_100)
        // It reads: it is sent the batches it missed (less than 64 KiB).
        slow.drain()
        settle(hub, [fast, slow])
        #expect(slow.events().jobs == published)
        // It stops again for longer: on its return it is owed more than 64 KiB and is resynchronized
        // from the log; it still gets every job event once, in order.
        for _ in 0..<60 { publish(1); fast.drain() }
        hub.subscribe(writer: late.writer, stream: late.stream, jobs: nil, intervalMilliseconds: 500, start: .live)
        settle(hub, [late])
        let lateStart = published.count
        slow.drain()
        settle(hub, [fast, slow])
        #expect(hub.sharedSubscriberCount == 2, "the slow one has a queue of its own now")
        publish(5)
        for _ in 0..<10 { slow.drain(); settle(hub, [fast, slow, late]) }   // the rest of the log, a page at a time
        #expect(hub.privateFigures.readingLog == 0)
        // Caught up, it rejoins its group at the next publication.
        publish(1)
        #expect(hub.sharedSubscriberCount == 3)
        publish(2)
        slow.drain()
        settle(hub, [fast, slow, late])
        for sink in [fast, slow] {
            let (eventIDs, jobs) = sink.events()
            #expect(jobs == published)
            #expect(eventIDs == eventIDs.sorted() && Set(eventIDs).count == eventIDs.count)
        }
        #expect(late.events().jobs == Array(published[lateStart...]))
        hub.closeAll()
    }

    /// A stream resuming far back (`Last-Event-ID`) is owed the whole log: it is handed at most 64 KiB (plus a
    /// 32 KiB chunk) at a time, the rest only as it reads, so a replay never sits in its buffers at once.
    @Test func aLongReplayIsHandedOutAsTheStreamReads() throws {
        let ids = EventIDAllocator(startingAfter: 0)
        let hub = EventHub(ids: ids, logger: Logger(label: "test"), heartbeat: 0)
        var published: [String] = []
        for _ in 0..<600 {   // about 1.2 MB of job events
            let event = jobEvent(ids.next(), ids)
            published.append(event.jobID!)
            hub.publish([event])
        }
        let resumed = Sink()
        hub.subscribe(writer: resumed.writer, stream: resumed.stream, jobs: nil, intervalMilliseconds: 500, start: .after(0))
        settle(hub, [resumed])
        var received: [UInt8] = []
        var reads = 0
        while received.count < 600 * 2_000 && reads < 100 {
            #expect(resumed.stream.bufferedByteCount <= 64 * 1024 + 32 * 1024 + 2_100)
            received = resumed.drain()
            reads += 1
            settle(hub, [resumed])
        }
        #expect(reads >= 4, "handed out in several pieces, not at once")
        // Live events after the replay follow it, in order, once.
        for _ in 0..<3 {
            let event = jobEvent(ids.next(), ids)
            published.append(event.jobID!)
            hub.publish([event])
        }
        settle(hub, [resumed])
        let (eventIDs, jobs) = resumed.events()
        #expect(jobs == published)
        #expect(eventIDs == Array(1...603))
        hub.closeAll()
    }

    /// A filtered stream that stops reading is not offered events any more: it keeps its position in the log (no
    /// queue of what it missed, however much is published), and reads the log page by page when it reads again.
    @Test func aSlowPrivateStreamHoldsOnlyItsPositionAndReadsTheLogWhenItReturns() throws {
        let ids = EventIDAllocator(startingAfter: 0)
        let hub = EventHub(ids: ids, logger: Logger(label: "test"), heartbeat: 0)
        let slow = Sink()
        hub.subscribe(writer: slow.writer, stream: slow.stream, jobs: ["job1", "job2", "job3"], intervalMilliseconds: 500,
                      start: .live)
        settle(hub, [slow])
        var expected: [Int64] = []
        for round in 0..<3 {
            for _ in 0..<1_500 {   // 3 MB, most of it for the stream's jobs
                let id = ids.next()
                let job = "job\(id % 4)"
                hub.publish([ServerEvent(id: id, kind: .job, jobID: job, data: Array((job + "|" + String(repeating: "x", count: 2_000)).utf8))])
                if job != "job0" { expected.append(id) }
            }
            settle(hub, [slow])
            #expect(slow.stream.bufferedByteCount <= 64 * 1024 + 32 * 1024 + 2_100, "round \(round)")
            #expect(hub.privateFigures.heldEvents <= 40, "at most one page of the log, not what it missed")
            #expect(hub.privateFigures.readingLog == 1)
            var reads = 0
            while reads < 200, slow.stream.bufferedByteCount > 0 || hub.privateFigures.readingLog > 0 {
                slow.drain()
                settle(hub, [slow])
                reads += 1
            }
            #expect(reads >= 20, "read a page at a time")
            #expect(hub.privateFigures.readingLog == 0, "caught up: fed live again")
        }
        #expect(slow.events().ids == expected)
        hub.closeAll()
    }

    /// A stream that stops reading for longer than the log keeps events is closed when it returns (its client resumes
    /// with Last-Event-ID and is told to reset), and meanwhile holds nothing.
    @Test func aStreamBehindWhatTheLogKeepsIsClosedOnItsReturn() throws {
        let ids = EventIDAllocator(startingAfter: 0)
        let hub = EventHub(ids: ids, logger: Logger(label: "test"), windowCapacity: 200, heartbeat: 0)
        let slow = Sink(), member = Sink()
        hub.subscribe(writer: slow.writer, stream: slow.stream, jobs: nil, intervalMilliseconds: 500, start: .after(0))
        hub.subscribe(writer: member.writer, stream: member.stream, jobs: nil, intervalMilliseconds: 500, start: .live)
        settle(hub, [slow, member])
        for _ in 0..<1_000 { hub.publish([jobEvent(ids.next(), ids)]) }
        settle(hub, [slow, member])
        #expect(hub.privateFigures.heldEvents <= 40)
        #expect(!slow.stream.isClosed && !member.stream.isClosed, "closed only when it reads again")
        for sink in [slow, member] {
            for _ in 0..<5 { sink.drain(); settle(hub, [sink]) }
        }
        #expect(slow.stream.isClosed)
        #expect(member.stream.isClosed, "a group member resynchronized past the log is closed too")
        #expect(hub.subscriberCount == 0)
        hub.closeAll()
    }

    /// `/metrics` reads the hub's gauges without waiting for its queue: they show the window as of the last publish,
    /// renewed at most once a second of the hub's clock.
    @Test func theGaugesShowTheWindowAsOfTheLastPublishAtMostOnceASecond() {
        let ids = EventIDAllocator(startingAfter: 0)
        let time = Mutex(100.0)
        let hub = EventHub(ids: ids, logger: Logger(label: "test"), windowCapacity: 64, heartbeat: 0,
                           clock: { time.withLock { $0 } })
        #expect(hub.gauges.current == HubGauges.Figures(windowEvents: 0, windowCapacity: 64))
        hub.publish([jobEvent(ids.next(), ids), jobEvent(ids.next(), ids)])
        settle(hub, [])
        #expect(hub.gauges.current.windowEvents == 2)
        hub.publish([jobEvent(ids.next(), ids)])
        settle(hub, [])
        #expect(hub.gauges.current.windowEvents == 2, "within the second: not renewed")
        time.withLock { $0 += 1 }
        hub.publish([jobEvent(ids.next(), ids)])
        settle(hub, [])
        #expect(hub.gauges.current == HubGauges.Figures(windowEvents: 4, windowCapacity: 64))
    }
}
