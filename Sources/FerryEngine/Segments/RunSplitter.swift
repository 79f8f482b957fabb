import Logging

/// Splits a run over more connections: on the first accepted answer to the rest of the file, and on each raise of
/// the connection ramp. It holds only settings and is handed the run it changes; it runs on the engine queue, and
/// the engine connects the new fetches when it returns true (`DownloadEngine+Fetches`).
///
/// How a download becomes split: its first exchange asks for the rest of the file (from zero, or `Range: bytes=N-`
/// when resuming a contiguous partial file). When that response shows the origin serves ranges (a 206, or
/// `Accept-Ranges: bytes`), gives the length and a validator (strong ETag, else Last-Modified), and the file is
/// worth splitting (`SplitPlanner`), its segment is divided into near-equal ranges: the running exchange keeps the
/// first one (it is cut at that range's end) and new fetches ask for the others with `Range: bytes=a-b` and
/// `If-Range`. No probe request is spent. A download that named no number of connections first ramps up
/// (`AdaptiveSplit`, ticked by `tick`), splitting on its first raise. A partial file with saved segment state
/// resumes split at once (`DownloadEngine+Runs`).
struct RunSplitter {
    let configuration: EngineConfiguration
    let logger: Logger
    /// The spool's free bytes when `needed` more are to be taken (`DownloadEngine.freeBytes(needing:)`).
    let freeBytes: (_ needed: Int64) -> Int64?
    /// Preparing the split run's segment sidecar failed (`DownloadEngine.writeFailed`).
    let sidecarFailed: @Sendable (Transfer, SegmentedDownload, SystemError) -> Void

    /// Connections wanted for `transfer`'s file of `total` bytes (`SplitPlanner.wantedConnections`).
    func wantedConnections(_ transfer: Transfer, total: Int64) -> Int {
        SplitPlanner.wantedConnections(
            total: total, asked: transfer.spec.connections, activeSources: transfer.sources.lazy.filter(\.isActive).count,
            segmentable: !transfer.singleConnectionOnly && transfer.source.allowsSegments,
            threshold: configuration.segmentationThreshold, defaultConnections: configuration.defaultConnections)
    }

    /// The accepted answer `head` to `fetch`'s request for the rest of the file: splits the run when that is worth
    /// it (its exchange keeps the first range), or starts its ramp. True when the run was split now.
    /// - Parameters:
    ///   - hostRoom: connections the transfer's host has left (`maxPerHost` less those in use).
    ///   - alignment: where segment boundaries fall (`SplitPlanner.alignment`).
    func answered(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, _ head: ResponseHead,
                  hostRoom: Int, alignment: Int64, now: Double) -> Bool {
        guard let total = run.table.knownTotal, fetch.position < total, let easy = fetch.easy,
              head.status == 206 || head.acceptsByteRanges,
              let validator = Transfer.ifRangeValidator(etag: head.etag, lastModified: head.lastModified) else { return false }
        let requestURL = easy.effectiveURL ?? run.requestURL
        let chosen = transfer.spec.connections != nil || transfer.sources.lazy.filter(\.isActive).count > 1
        switch SplitPlanner.start(remaining: total - fetch.position, wanted: wantedConnections(transfer, total: total),
                                  chosen: chosen, room: 1 + max(0, hostRoom), minimumSegmentSize: configuration.minimumSegmentSize) {
        case .none:
            return false
        case .adaptive(let wanted):
            // Nobody asked for a number: start on this one connection and add more only while they raise the total.
            run.adaptive = AdaptiveSplit(wanted: wanted, tuning: tuning, now: now, bytesReceived: run.bytesReceived)
            run.deferredSplit = (validator, requestURL)
            return false
        case .split(let count, let target):
            return split(transfer, run, fetch, into: count, target: target, validator: validator, requestURL: requestURL,
                         alignment: alignment, now: now)
        }
    }

    /// One tick of a run's connection ramp: a raise splits the file on the first one (the running exchange keeps
    /// its range, a free connection takes over the back half) and lets more connections take over halves after.
    /// True when the connections wanted were raised.
    func tick(_ transfer: Transfer, _ run: SegmentedDownload, alignment: Int64, now: Double) -> Bool {
        guard var adaptive = run.adaptive, let total = run.table.knownTotal else { return false }
        let target = adaptive.decide(now: now, bytesReceived: run.bytesReceived, remaining: total - run.bytesReceived,
                                     minimumPiece: configuration.minimumSegmentSize)
        run.adaptive = adaptive.isFinished ? nil : adaptive
        guard let target else { return false }
        if !run.isSplit {
            guard let plan = run.deferredSplit, run.fetches.count == 1, let fetch = run.fetches.values.first,
                  split(transfer, run, fetch, into: 1, target: target, validator: plan.validator, requestURL: plan.requestURL,
                        alignment: alignment, now: now)
            else {
                run.adaptive = nil
                return false
            }
        } else {
            run.target = target
        }
        logger.debug("connections raised", metadata: ["id": "\(transfer.id)", "target": "\(target)"])
        return true
    }

    /// Makes the run a split one: `fetch`'s segment divided into `count` ranges, `target` connections wanted, the
    /// segment state saved from now on. False (nothing changed) when preallocating the rest of the file would take
    /// the free space below the reserve: one connection then writes as bytes arrive and waits with `disk_full`.
    private func split(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch, into count: Int, target: Int,
                       validator: String, requestURL: String, alignment: Int64, now: Double) -> Bool {
        guard let total = run.table.knownTotal else { return false }
        let needed = total - fetch.position
        guard SplitPlanner.leavesReserve(free: freeBytes(needed), needed: needed, reserve: configuration.minFreeSpace) else { return false }
        run.split(fetch, into: count, validator: validator, target: target, requestURL: requestURL, alignment: alignment)
        run.saves = SegmentSaves(savedBytes: run.table.bytesWritten, at: now)
        if let sidecar = run.sidecar {
            let failed = sidecarFailed
            transfer.writer.prepareSegments(sidecar) { error in
                guard let error else { return }
                failed(transfer, run, error)
            }
        }
        logger.debug("segmented", metadata: ["id": "\(transfer.id)", "segments": "\(count)", "target": "\(target)", "total": "\(total)"])
        return true
    }

    private var tuning: AdaptiveSplit.Tuning {
        AdaptiveSplit.Tuning(settle: configuration.adaptiveSettle, fastEnough: configuration.adaptiveFastEnough,
                             minimumGain: configuration.adaptiveMinimumGain)
    }
}
