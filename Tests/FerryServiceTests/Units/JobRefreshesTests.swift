@testable import FerryService
import Synchronization
import Testing

/// `JobRefreshes`: ids heard while a read is under way wait and go together, each once, in the next read.
@Suite struct JobRefreshesTests {
    /// A read that waits until it is let go, recording the batches it was given.
    final class Reads: Sendable {
        let batches = Mutex<[[String]]>([])
        let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let started: AsyncStream<Void>
        private let startedContinuation: AsyncStream<Void>.Continuation

        init() { (started, startedContinuation) = AsyncStream<Void>.makeStream() }

        func read(_ ids: [String]) async {
            batches.withLock { $0.append(ids) }
            await withCheckedContinuation { continuation in
                gate.withLock { $0 = continuation }
                startedContinuation.yield()
            }
        }

        func letGo() { gate.withLock { $0?.resume(); $0 = nil } }
    }

    @Test func idsHeardDuringAReadGoTogetherOnceInTheNext() async {
        let reads = Reads()
        let refreshes = JobRefreshes { await reads.read($0) }
        var started = reads.started.makeAsyncIterator()
        await refreshes.heard(["a", "b"])
        _ = await started.next()                      // the first read is under way
        await refreshes.heard(["c", "a"])
        await refreshes.heard(["c", "d"])
        reads.letGo()
        _ = await started.next()                      // the second read: what was heard meanwhile, each once
        reads.letGo()
        #expect(reads.batches.withLock { $0 } == [["a", "b"], ["c", "a", "d"]])
        await refreshes.heard(["e"])
        _ = await started.next()
        reads.letGo()
        #expect(reads.batches.withLock { $0 }.last == ["e"], "a read after the others had ended")
    }
}
