import FerryEngine
import Synchronization
import Testing
@testable import FerryService

/// The engine's events wait for the supervisor in a bounded mailbox (issue 32: the unbounded stream it replaced
/// held 16 MB for a debug build's supervisor under load).
@Suite struct TransferEventMailboxTests {
    static func progress(_ id: String, _ bytes: Int64) -> TransferEvent {
        .progress(id: id, TransferProgress(bytesReceived: bytes, bytesExpected: nil, bytesPerSecond: 0, eta: nil))
    }

    @Test func samplesPostedWhileTheSupervisorIsHeldUpWaitAsOnePerTransfer() async {
        let mailbox = TransferEventMailbox()
        for round in 1...100 {
            for job in 0..<200 { mailbox.post(Self.progress("j\(job)", Int64(round))) }
            if round == 50 { mailbox.post(.finished(id: "j7", FinishedFile(filename: "f", path: "/tmp/f", size: 50, sha256: nil, contentType: nil, finalURL: "http://x/f", etag: nil, lastModified: nil))) }
        }
        #expect(mailbox.count == 202, "20,000 samples of 200 transfers, one finish, and the finished job's later sample")
        mailbox.finish()
        var applied: [TransferEvent] = []
        await mailbox.deliver { applied.append($0) }
        #expect(applied.count == 202)
        let j7 = applied.filter { $0.id == "j7" }.map { event -> String in
            switch event {
            case .progress(_, let progress): return "p\(progress.bytesReceived)"
            case .finished: return "finished"
            default: return "other"
            }
        }
        #expect(j7 == ["p50", "finished", "p100"], "a job's events keep their order")
        #expect(mailbox.count == 0)
    }

    @Test func deliverAppliesWhatIsPostedUntilFinished() async {
        let mailbox = TransferEventMailbox()
        let pump = Task {
            var ids: [String] = []
            await mailbox.deliver { ids.append($0.id) }
            return ids
        }
        for index in 0..<500 { mailbox.post(.started(id: "s\(index)", offset: 0)) }
        mailbox.finish()
        #expect(await pump.value == (0..<500).map { "s\($0)" })
    }

    /// `barrier()` returns once what was posted before it is applied: not before (the slow apply still holds the
    /// events), at once when nothing waits, and when delivery ends.
    @Test func aBarrierWaitsForTheEventsPostedBeforeIt() async {
        let mailbox = TransferEventMailbox()
        await mailbox.barrier()  // nothing posted: at once
        let applied = AppliedCount()
        let pump = Task {
            await mailbox.deliver { _ in
                try? await Task.sleep(for: .milliseconds(20))
                applied.add()
            }
        }
        for index in 0..<10 { mailbox.post(.started(id: "s\(index)", offset: 0)) }
        await mailbox.barrier()
        #expect(applied.value == 10, "the barrier returned before the events posted ahead of it were applied")
        mailbox.post(.started(id: "late", offset: 0))
        mailbox.finish()
        await pump.value
        await mailbox.barrier()  // delivery ended: at once
        #expect(applied.value == 11)
    }
}

/// A count shared with a pump's closure.
private final class AppliedCount: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
