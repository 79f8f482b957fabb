import CCurl
import Dispatch
import FerryCore
import Foundation

/// Admission, scheduling, stopping and shutdown. Everything here runs on `queue`.
extension DownloadEngine {
    func accept(_ spec: TransferSpec) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !lifecycle.shuttingDown else { return }
        if let existing = transfers[spec.id] {
            if existing.phase == .stopping { existing.pendingResubmit = spec }
            return
        }
        let writer = FileWriter(
            path: spool.partialPath(for: spec.id), segmentsPath: spool.segmentsPath(for: spec.id), label: spec.id,
            callbackQueue: queue, algorithms: spec.checksum.map { [$0.algorithm] } ?? [], creating: spool.partialEntries,
            digestFirst: spec.checksum != nil || spec.digestBeforeFinish || objectStore != nil,
            growing: (spool.growing, spec.id), pageCacheOnly: spec.readWhileWritten, lanes: spool.lanes)
        let transfer = Transfer(spec: spec, writer: writer)
        // With an object store the name is the object key's last part too: secured here, before anything is stored
        // under it, so the link into `files/` cannot give the file another (a name brought from another node, or
        // taken here meanwhile, becomes its first free variant, reported with the answer's metadata).
        transfer.filename = spec.filename.map { objectStore == nil ? $0 : storage.reserveUnshared(filename: $0, for: spec.id) }
        setRateLimit(transfer, spec.maxBytesPerSecond)
        transfers[spec.id] = transfer
        enqueue(transfer)
    }

    /// Puts a transfer in the scheduling queue and starts what the limits allow.
    func enqueue(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        transfer.phase = .queued
        scheduling.enqueue(transfer.id, host: transfer.host, priority: transfer.spec.priority, sequence: transfer.spec.sequence,
                           group: transfer.spec.group)
        pump()
        if transfer.phase == .queued { emit(.waiting(id: transfer.id, reason: .queued)) }
    }

    /// Starts every transfer the limits now allow, then re-divides the global speed limit.
    func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !lifecycle.shuttingDown else { return }
        for id in scheduling.nextToStart() {
            guard let transfer = transfers[id], transfer.phase == .queued else {
                scheduling.remove(id)
                continue
            }
            if connectionsInUse(host: transfer.host) >= configuration.maxPerHost {
                // The segments of other transfers hold every connection to this host: wait for one to be released.
                scheduling.remove(id)
                scheduling.enqueue(id, host: transfer.host, priority: transfer.spec.priority, sequence: transfer.spec.sequence,
                                   group: transfer.spec.group)
                continue
            }
            start(transfer)
        }
        applyRateLimits()
    }

    /// Stops a transfer from outside (pause, cancel, shutdown, free space): closes its writer, then `stopped`.
    func stop(_ transfer: Transfer, _ intent: Transfer.StopIntent) {
        dispatchPrecondition(condition: .onQueue(queue))
        switch transfer.phase {
        case .queued, .retryWait, .diskWait:
            transfer.retryWork?.cancel()
            transfer.retryWork = nil
            scheduling.remove(transfer.id)
            transfer.phase = .stopping
            transfer.stopIntent = intent
            closeWriter(transfer) { bytes in self.stopped(transfer, bytesOnDisk: bytes) }
        case .opening:
            // `opened` sees the phase change and closes the writer.
            transfer.phase = .stopping
            transfer.stopIntent = intent
        case .running:
            disconnectFetches(transfer)
            scheduling.remove(transfer.id)
            transfer.phase = .stopping
            transfer.stopIntent = intent
            closeWriter(transfer) { bytes in self.stopped(transfer, bytesOnDisk: bytes) }
            pump()
        case .stopping:
            transfer.stopIntent = Self.stronger(transfer.stopIntent, intent)
        case .finishing:
            // Too late to pause a finish in the spool: the file is complete. A cancel removes the result once it is in
            // place. Storing it in an object store can take long (the store is away): any stop ends that when the
            // current request ends, at once while a back-off is waited out, and the file stays whole in `partial/`.
            if intent == .cancel || objectStore != nil { transfer.stopIntent = Self.stronger(transfer.stopIntent, intent) }
            if let wait = transfer.storeWait {
                transfer.storeWait = nil
                wait.retry.cancel()
                leaveUnstored(transfer, size: wait.size)
            }
        }
    }

    private static func stronger(_ a: Transfer.StopIntent?, _ b: Transfer.StopIntent) -> Transfer.StopIntent {
        let order: [Transfer.StopIntent] = [.diskFull, .pause, .shutdown, .cancel]
        guard let a else { return b }
        return order.firstIndex(of: a)! >= order.firstIndex(of: b)! ? a : b
    }

    /// The writer of a stopped transfer is closed: report, and forget it unless it waits for space.
    func stopped(_ transfer: Transfer, bytesOnDisk: Int64) {
        dispatchPrecondition(condition: .onQueue(queue))
        let intent = transfer.stopIntent ?? .shutdown
        transfer.stopIntent = nil
        defer { notifyStopObservers(transfer, bytesOnDisk: bytesOnDisk) }
        switch intent {
        case .pause:
            emit(.paused(id: transfer.id, bytesOnDisk: bytesOnDisk))
            forget(transfer)
        case .shutdown:
            emit(.stopped(id: transfer.id, bytesOnDisk: bytesOnDisk))
            forget(transfer)
        case .cancel:
            let id = transfer.id
            storage.release(jobID: id)
            forget(transfer)
            diskQueue.async { self.spool.removePartial(jobID: id) }
        case .diskFull:
            if lifecycle.shuttingDown {
                emit(.stopped(id: transfer.id, bytesOnDisk: bytesOnDisk))
                forget(transfer)
            } else {
                waitForSpace(transfer)
            }
        }
    }

    /// Tells whoever waits for this transfer to stop (`pause(id:stopped:)`) the bytes on disk, after the events
    /// emitted so far; nil when it ended without stopping.
    func notifyStopObservers(_ transfer: Transfer, bytesOnDisk: Int64?) {
        guard !transfer.stopObservers.isEmpty else { return }
        let observers = transfer.stopObservers
        transfer.stopObservers = []
        eventQueue.async { for observer in observers { observer(bytesOnDisk) } }
    }

    func waitForSpace(_ transfer: Transfer) {
        scheduling.remove(transfer.id)
        transfer.phase = .diskWait
        emit(.waiting(id: transfer.id, reason: .diskFull))
        pump()
    }

    /// Removes a transfer from the engine; a submit that arrived meanwhile is accepted now.
    func forget(_ transfer: Transfer) {
        dispatchPrecondition(condition: .onQueue(queue))
        transfer.retryWork?.cancel()
        transfer.retryWork = nil
        notifyStopObservers(transfer, bytesOnDisk: nil)
        disk.allowance?.release(jobID: transfer.id)
        scheduling.remove(transfer.id)
        if transfers[transfer.id] === transfer { transfers[transfer.id] = nil }
        if let next = transfer.pendingResubmit {
            transfer.pendingResubmit = nil
            accept(next)
        }
        pump()
        finishShutdownIfIdle()
    }

    // MARK: shutdown

    func beginShutdown(_ done: @escaping @Sendable () -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !lifecycle.shuttingDown else {
            // A second call waits for the same end.
            let previous = lifecycle.shutdownDone
            lifecycle.shutdownDone = { previous?(); done() }
            finishShutdownIfIdle()
            return
        }
        lifecycle.shuttingDown = true
        lifecycle.shutdownDone = done
        for upload in Array(uploads.values) {
            // A delivery whose body is all sent waits a moment for the target's answer: ended now, a target that took
            // the file would be sent it again after the restart. Any other is sent again from the first byte then.
            if upload.easy != nil, upload.bytesSent == upload.spec.size {
                awaitAnswerBeforeShutdown(upload)
            } else {
                end(upload)
            }
        }
        for transfer in Array(transfers.values) { stop(transfer, .shutdown) }
        finishShutdownIfIdle()
    }

    /// Once the last transfer is gone during shutdown: stop the ticker, clean libcurl up, wait for every source's
    /// cancel handler, then for the event queue to drain.
    func finishShutdownIfIdle() {
        guard lifecycle.shuttingDown, transfers.isEmpty, uploads.isEmpty, let done = lifecycle.shutdownDone else { return }
        lifecycle.shutdownDone = nil
        lifecycle.ticker?.cancel()
        lifecycle.ticker = nil
        let eventQueue = self.eventQueue
        let diskQueue = self.diskQueue
        multi.close {
            diskQueue.async { eventQueue.async { done() } }
        }
    }
}
