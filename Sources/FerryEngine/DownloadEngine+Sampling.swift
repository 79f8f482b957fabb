import Dispatch
import Foundation

/// The engine's one repeating timer: progress samples per transfer and the free-space check. Runs on `queue`.
extension DownloadEngine {
    func startTicker() {
        dispatchPrecondition(condition: .onQueue(queue))
        let interval = max(0.05, min(configuration.progressInterval, configuration.diskCheckInterval))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
        lifecycle.ticker = timer
    }

    static func monotonicSeconds() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    private func tick() {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = Self.monotonicSeconds()
        // Only active transfers can be running (see `connectionsInUse(host:)`): not the whole queue of a batch.
        for id in scheduling.activeIDs {
            guard let transfer = transfers[id], transfer.phase == .running, let run = transfer.segmented else { continue }
            if run.responded || run.isSplit { sample(transfer, run, now: now) }
            for fetch in run.fetches.values where fetch.isConnected {
                fetch.meter.record(totalBytes: fetch.position, at: now)
                fetch.speedSamples += 1
            }
            saveSegmentsIfDue(transfer, now: now)
            if run.adaptive != nil { adapt(transfer, run, now: now) }
            fillConnections(transfer)
        }
        sampleUploads(now: now)
        if now - disk.lastCheck >= configuration.diskCheckInterval {
            disk.lastCheck = now
            checkFreeSpace()
        }
    }

    /// Records a speed sample and emits progress at most once per `progressInterval` (and after a change, or once a
    /// second so a stalled transfer's speed decays).
    private func sample(_ transfer: Transfer, _ run: SegmentedDownload, now: Double) {
        let received = run.bytesReceived
        run.meter.record(totalBytes: received, at: now)
        guard now - transfer.lastReportTime >= configuration.progressInterval * 0.95 else { return }
        guard received != run.lastReportedBytes || now - transfer.lastReportTime >= 1 else { return }
        transfer.lastReportTime = now
        run.lastReportedBytes = received
        let remaining = transfer.bytesExpected.map { max(0, $0 - received) }
        emit(.progress(id: transfer.id, TransferProgress(
            bytesReceived: received, bytesExpected: transfer.bytesExpected,
            bytesPerSecond: run.meter.bytesPerSecond, eta: run.meter.eta(remaining: remaining),
            sourceBytes: sourceBytes(transfer))))
    }

    /// Below the reserve, running transfers stop and wait (`.diskFull`); above it, waiting ones continue.
    func checkFreeSpace() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !lifecycle.shuttingDown, let free = freshFreeBytes() else { return }
        if free < configuration.minFreeSpace {
            for transfer in transfers.values where transfer.phase == .running || transfer.phase == .opening {
                stop(transfer, .diskFull)
            }
        } else {
            let waiting = transfers.values.filter { $0.phase == .diskWait }.sorted { $0.spec.sequence < $1.spec.sequence }
            for transfer in waiting { enqueue(transfer) }
        }
    }

    /// The spool's free space for a caller about to take `needed` bytes: the last reading when it may stand in
    /// (`FreeSpaceGauge`: recent, and well above the reserve), else a new one.
    func freeBytes(needing needed: Int64 = 0) -> Int64? {
        dispatchPrecondition(condition: .onQueue(queue))
        let now = Self.monotonicSeconds()
        if let cached = disk.freeSpace.cached(now: now, reserve: configuration.minFreeSpace, needed: needed) { return cached }
        return freshFreeBytes(now: now)
    }

    /// Reads the spool's free space (`statfs`) and keeps the reading.
    func freshFreeBytes(now: Double = DownloadEngine.monotonicSeconds()) -> Int64? {
        let free = spool.freeBytes()
        disk.freeSpace.record(free, at: now)
        return free
    }
}
