import Testing
@testable import FerryEngine

/// The engine's events waiting for a consumer that is held up keep one progress sample per transfer beside the
/// lifecycle events, in order (issue 32).
@Suite struct TransferEventQueueTests {
    static func progress(_ id: String, _ bytes: Int64) -> TransferEvent {
        .progress(id: id, TransferProgress(bytesReceived: bytes, bytesExpected: nil, bytesPerSecond: 0, eta: nil))
    }

    static func describe(_ event: TransferEvent) -> String {
        switch event {
        case .progress(let id, let progress): return "\(id):p\(progress.bytesReceived)"
        case .started(let id, _): return "\(id):started"
        case .paused(let id, _): return "\(id):paused"
        default: return "\(event.id):other"
        }
    }

    @Test func aHeldUpConsumerFindsOneProgressSamplePerTransfer() {
        var queue = TransferEventQueue()
        for round in 1...50 {
            for job in 0..<200 { queue.append(Self.progress("j\(job)", Int64(round))) }
        }
        #expect(queue.count == 200, "10,000 samples of 200 transfers wait as 200")
        let taken = queue.takeAll()
        #expect(taken.map(Self.describe) == (0..<200).map { "j\($0):p50" }, "each transfer's newest sample, in the order of their first")
        #expect(queue.isEmpty)
    }

    @Test func lifecycleEventsAreAllKeptAndAJobsEventsKeepTheirOrder() {
        var queue = TransferEventQueue()
        queue.append(.started(id: "a", offset: 0))
        queue.append(Self.progress("a", 1))
        queue.append(Self.progress("b", 1))
        queue.append(Self.progress("a", 2))
        queue.append(.paused(id: "a", bytesOnDisk: 2))
        queue.append(Self.progress("a", 3))  // after the pause: not merged into the sample before it
        queue.append(Self.progress("b", 2))
        queue.append(.started(id: "a", offset: 3))
        queue.append(.started(id: "a", offset: 3))  // lifecycle events are never merged
        #expect(queue.takeAll().map(Self.describe) == ["a:started", "a:p2", "b:p2", "a:paused", "a:p3", "a:started", "a:started"])
    }

    @Test func anOutboxScheduledOnceDeliversEverythingPostedMeanwhile() {
        let outbox = EventOutbox()
        #expect(outbox.post(Self.progress("a", 1)), "the first event asks for a drain")
        for bytes in 2...1_000 { #expect(!outbox.post(Self.progress("a", Int64(bytes)))) }
        #expect(!outbox.post(.paused(id: "a", bytesOnDisk: 1_000)))
        #expect(outbox.count == 2)
        var delivered: [String] = []
        outbox.drain { delivered.append(Self.describe($0)) }
        #expect(delivered == ["a:p1000", "a:paused"])
        #expect(outbox.post(Self.progress("a", 1)), "after a drain that emptied it, the next event asks again")
    }
}
