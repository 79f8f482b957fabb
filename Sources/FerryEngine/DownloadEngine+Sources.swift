import FerryCore

/// Mirrors: a download whose job has more than one source (API.md "Downloader options", `mirrors`). Everything here
/// runs on `queue`.
///
/// Rules:
/// - The first exchange asks the first active source for the rest of the file; the source that answers defines the
///   file (`Transfer.referenceSource`: its length and validators are the ones every segment request checks).
/// - Once split, each fetch takes the active source with the fewest connections; a job with mirrors wants at least
///   one connection per active source.
/// - A source whose segment answer disagrees with the reference (another length or validator, or no ranges) is
///   dropped with `source_mismatch`, never mixed in; a source that fails (network, HTTP status, timeout, a refused
///   address) is dropped with that failure. Its fetches go back to the pool for the others. The last active source
///   is never dropped: its failures take the usual path (a segment retry, or the job's retry).
/// - Dropped stays dropped for the job (the service keeps it in `sources`), except the main URL when a PATCH gives
///   the job a fresh one.
extension DownloadEngine {
    /// Whether `transfer` has more than one source still active.
    func hasOtherSources(_ transfer: Transfer) -> Bool {
        transfer.sources.lazy.filter(\.isActive).count > 1
    }

    /// The source `fetch` should ask next: its own while it is active and, for a split download, no other active
    /// source has fewer connections; otherwise the least loaded active source (lowest index first).
    func chooseSource(_ transfer: Transfer, _ run: SegmentedDownload, for fetch: SegmentFetch) -> Int {
        guard !transfer.sources.isEmpty else { return 0 }
        let active = transfer.sources.indices.filter { transfer.sources[$0].isActive }
        guard let first = active.first else { return fetch.source }
        guard run.isSplit else { return transfer.sources[fetch.source].isActive ? fetch.source : first }
        var load: [Int: Int] = [:]
        for other in run.fetches.values where other !== fetch && other.isConnected { load[other.source, default: 0] += 1 }
        let least = active.min { (load[$0] ?? 0, $0) < (load[$1] ?? 0, $1) } ?? first
        if transfer.sources[fetch.source].isActive, (load[fetch.source] ?? 0) <= (load[least] ?? 0) { return fetch.source }
        return least
    }

    /// The URL `fetch`'s request goes to: the reference source's URL after redirects once split (`run.requestURL`),
    /// else the source's own URL.
    func requestURL(_ transfer: Transfer, _ run: SegmentedDownload, _ fetch: SegmentFetch) -> String {
        guard !transfer.sources.isEmpty else { return run.requestURL }
        if run.isSplit, fetch.source == transfer.referenceSource { return run.requestURL }
        return transfer.sources[fetch.source].url.normalized
    }

    /// The URL a new run's first exchange asks: the first active source's.
    func firstRequestURL(_ transfer: Transfer) -> String {
        guard let source = transfer.sources.first(where: \.isActive) else { return transfer.url.normalized }
        return source.url.normalized
    }

    /// Drops the source `fetch` asked, when another one is active and the failure is the source's doing; its fetches
    /// are disconnected and wait for another source. Returns whether it dropped (the caller then does nothing else).
    func dropSource(_ transfer: Transfer, _ run: SegmentedDownload, after fetch: SegmentFetch, _ failure: JobFailure) -> Bool {
        let index = fetch.source
        guard transfer.sources.indices.contains(index), transfer.sources[index].isActive, hasOtherSources(transfer) else { return false }
        transfer.sources[index].dropped = failure
        logger.notice("source dropped", metadata: [
            "id": "\(transfer.id)", "source": "\(transfer.sources[index].url.redacted)", "code": "\(failure.code)",
            "message": "\(failure.message)",
        ])
        emit(.sourceDropped(id: transfer.id, index: index, failure))
        for other in run.fetches.values where other.source == index {
            if let easy = other.easy {
                multi.remove(easy)
                easy.cleanup()
                other.easy = nil
                _ = other.endExchange()
            }
            other.pausedForBackpressure = false
            other.waitingForRate = false
            other.retryAt = nil
        }
        if !run.isSplit || index == transfer.referenceSource {
            // The next exchange asks another source for the rest (validated by If-Range as a resume is); whichever
            // answers defines the file from then on.
            transfer.referenceSource = transfer.sources.firstIndex(where: \.isActive) ?? 0
            run.requestURL = firstRequestURL(transfer)
        }
        fillConnections(transfer)
        applyRateLimits()
        pump()
        return true
    }

    /// The failure a source is to blame for, or nil when the cause is not about where bytes come from (disk,
    /// quota, size limit, checksum, an internal error).
    static func sourceFailure(_ cause: FailureCause) -> JobFailure? {
        switch cause {
        case .curl, .httpStatus, .forbiddenDestination, .unusableResponse, .hostKeyRejected, .sizeUnderstated:
            return FailureClassifier.classify(cause).failure
        case .write, .tooLarge, .quotaExceeded, .checksumMismatch, .internalError:
            return nil
        }
    }

    /// Bytes per source for a progress sample (empty without mirrors).
    func sourceBytes(_ transfer: Transfer) -> [Int64] { transfer.sources.map(\.bytesReceived) }
}
