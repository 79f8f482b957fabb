import FerryCore
import FerryHTTP
import FerryStore
import Foundation

/// A stale entry asked for again: a job makes the conditional request (`If-None-Match` with the entry's `ETag`, else
/// `If-Modified-Since` with its `Last-Modified`), deduplicated like any, so concurrent clients of one stale entry ask
/// the origin once. `304` refreshes the entry (`Ferry-Cache: revalidated`); a new body is streamed (`miss`) and,
/// once complete, replaces the entry, whose job is then deleted; an origin that cannot be reached (or answers 5xx)
/// leaves the stale file served (`stale`) while `--fetch-stale-if-error` allows.
///
/// A value made per request; the state it touches is the supervisor's and `FetchCache`'s.
struct FetchRevalidation {
    let fetch: FetchController
    let cached: JobRecord
    let draft: JobDraft
    let key: String
    let mayServeStale: Bool

    /// The conditional draft: the entry's validator as a header Ferry sends (no client header reaches the origin).
    var conditionalDraft: JobDraft {
        var conditional = draft
        if let etag = cached.etag {
            conditional.headers = [HeaderField(name: "If-None-Match", value: etag)]
        } else if let modified = cached.lastModified {
            conditional.headers = [HeaderField(name: "If-Modified-Since", value: modified)]
        } else {
            conditional.headers = [HeaderField(name: "Cache-Control", value: "no-cache")]
        }
        return conditional
    }

    func answer(_ request: HTTPRequest) async throws -> HTTPResponse {
        let asked = Date()
        let job: JobRecord
        do {
            job = try await fetch.create(conditionalDraft)
        } catch {
            if mayServeStale { return try await fetch.hit(request, cached, result: .stale) }
            throw error
        }
        let progress = await FetchProgress.await(job.id, in: fetch.supervisor,
                                                 deadline: Date().addingTimeInterval(fetch.responseTimeout))
        switch progress {
        case .failed(_, let failure) where failure.httpStatus == 304:
            fetch.cache.refreshed(jobID: cached.id)
            fetch.settle(job.id)
            return try await fetch.hit(request, cached, result: .revalidated)
        case .failed(_, let failure) where Self.isUnreachable(failure) && mayServeStale:
            cancel(job.id)
            return try await fetch.hit(request, cached, result: .stale)
        case .pending where mayServeStale:
            cancel(job.id)
            return try await fetch.hit(request, cached, result: .stale)
        case .gone:
            // Another client's identical revalidation ended and its job was removed: the entry says what it found.
            if case .fresh = fetch.cache.entry(for: cached, key: key).freshness.decision(at: Date()) {
                return try await fetch.hit(request, cached, result: .revalidated)
            }
            throw APIError(.conflict, "the revalidation of this URL was removed while waiting; ask again")
        case .finished(let job) where fetch.cache.mayKeep(jobID: job.id):
            replace(with: job.id)
            // Another client's revalidation brought this body before this request: it is a hit now.
            let before = (job.finishedAt ?? .distantFuture) < asked
            return try await fetch.hit(request, job, result: before ? .hit : .miss)
        case .finished, .responded, .failed, .pending:
            replaceWhenComplete(job.id)
            return try await fetch.answer(request, following: job.id, key: key, claimsKey: false)
        }
    }

    /// No answer from the origin, or a server error: the stale file may stand in (RFC 5861's stale-if-error).
    static func isUnreachable(_ failure: JobFailure) -> Bool {
        guard let status = failure.httpStatus else { return failure.code != .forbiddenDestination }
        return (500..<600).contains(status)
    }

    /// Stops a revalidation that is waiting out a back-off (the stale file answered instead).
    private func cancel(_ jobID: String) {
        let supervisor = fetch.supervisor, cache = fetch.cache
        Task {
            _ = try? await supervisor.cancel(jobID)
            cache.forget(jobID: jobID)
            try? await supervisor.delete(jobID)
        }
    }

    /// Once the new body is complete (and may be kept), it holds the key and the old entry's job is deleted: no one
    /// is served the old file after that (clients already reading it keep their descriptor).
    private func replaceWhenComplete(_ jobID: String) {
        let supervisor = fetch.supervisor, cache = fetch.cache, key = key
        Task {
            var job = supervisor.table.entry(jobID)?.0
            while let current = job, [.waiting, .downloading, .paused].contains(current.state) {
                try? await Task.sleep(nanoseconds: 20_000_000)
                job = supervisor.table.entry(jobID)?.0
            }
            guard let job, job.state == .finished, cache.mayKeep(jobID: jobID) else { return }
            await Self.replace(key: key, with: job.id, cache: cache, supervisor: supervisor)
        }
    }

    private func replace(with jobID: String) {
        let supervisor = fetch.supervisor, cache = fetch.cache, key = key
        guard let old = cache.replace(key: key, with: jobID) else { return }
        cache.forget(jobID: old)
        Task { try? await supervisor.delete(old) }
    }

    private static func replace(key: String, with jobID: String, cache: FetchCache, supervisor: JobSupervisor) async {
        guard let old = cache.replace(key: key, with: jobID) else { return }
        cache.forget(jobID: old)
        try? await supervisor.delete(old)
    }
}
