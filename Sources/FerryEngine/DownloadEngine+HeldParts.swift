import Dispatch
import FerryCore

/// A graceful stop of a node of several (issue 33): before the node lets its jobs go, its downloads are held (every
/// connection paused, `lifecycle.holdingForStop`) while the part uploads store the parts their written bytes cover and the
/// ledger records them. A fast download runs ahead of the store, and without this the node taking a job over fetched
/// again everything past the parts stored at the moment of the stop. Runs on `queue`.
extension DownloadEngine {
    /// Holds the downloads and calls `done` once no running transfer has a part left to store, or at `deadline`
    /// (monotonic seconds), whichever comes first.
    func storeHeldParts(until deadline: Double, then done: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        lifecycle.holdingForStop = true
        for transfer in transfers.values where transfer.phase == .running { pumpParts(transfer) }
        waitForHeldParts(until: deadline, then: done)
    }

    private func waitForHeldParts(until deadline: Double, then done: @escaping @Sendable () -> Void) {
        let left = transfers.values.filter(hasPartsLeftToStore)
        guard !left.isEmpty, Self.monotonicSeconds() < deadline else {
            if !left.isEmpty {
                logger.notice("stopping before every held part was stored", metadata: ["jobs": "\(left.map(\.id))"])
            }
            done()
            return
        }
        queue.asyncAfter(deadline: .now() + 0.02) { self.waitForHeldParts(until: deadline, then: done) }
    }

    /// Whether the transfer still writes bytes, uploads or records a part, or has written a part not yet uploaded.
    /// False while its uploads fail (the store is away: nothing to wait for).
    private func hasPartsLeftToStore(_ transfer: Transfer) -> Bool {
        guard transfer.phase == .running, let run = transfer.segmented, let size = transfer.bytesExpected else { return false }
        let live = transfer.parts
        guard live.failures == 0 else { return false }
        if !live.isIdle || live.saving || live.unsaved || run.pendingWriteBytes > 0 { return true }
        guard let record = live.record, record.size == size else { return false }
        let done = Set(record.parts.map(\.number))
        return !PartProgress.ready(size: size, partSize: record.partSize, written: run.table.writtenRanges, done: done, limit: 1).isEmpty
    }
}
