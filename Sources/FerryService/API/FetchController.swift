import FerryCore
import FerryEngine
import FerryHTTP
import FerryStore
import Foundation

/// `GET`/`HEAD /fetch/<scheme>/<host>[:<port>]/<path>[?<query>]` (API.md, "Fetch-through"): an adapter over the job
/// operations the REST API uses. A miss creates a job (tag `fetch`, deduplicated, so concurrent clients share one
/// origin transfer) and streams it as `?follow=true` does; a fresh hit is the finished file served like `/content`; a
/// stale one is revalidated by a conditional job (`FetchRevalidation`).
///
/// Stateless: the supervisor owns jobs, `FetchCache` the entries.
struct FetchController: Sendable {
    let supervisor: JobSupervisor
    let content: ContentController
    let spool: Spool
    let access: AccessGuard
    let cache: FetchCache
    let destinations: AddressPolicy
    /// Longest a client waits for the origin's first answer.
    var responseTimeout: Double = 300

    var settings: FetchSettings { cache.settings }
    var counters: FetchCounters
    var eviction: FetchEviction { FetchEviction(supervisor: supervisor, cache: cache) }

    func register(_ routes: RouteTable) {
        routes.add(.GET, "/fetch/*target", serve)
    }

    /// What a request may do with the cache.
    enum Permission { case fetch, cachedOnly }

    /// Every answer, counted (`FetchCounters`).
    func serve(_ request: HTTPRequest) async throws -> HTTPResponse {
        do {
            let response = try await respond(request)
            count(response, request: request)
            return response
        } catch {
            counters.answered("refused", bytes: 0, fromCache: false)
            throw error
        }
    }

    private func respond(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard settings.isOn else {
            throw APIError(.notFound, "fetch-through is off: start Ferry with --fetch-allow naming the origins it may reach")
        }
        let permission = try authorize(request)
        let url: SubmittedURL
        do { url = try FetchTarget.parse(rawPath: request.rawPath, query: request.query) } catch {
            throw Self.refusal(error)
        }
        guard settings.allow.allows(url) else {
            throw APIError(.forbidden, "\(url.host.serialized)\(url.port.map { ":\($0)" } ?? "") is not an origin --fetch-allow names")
        }
        var body = JobDraft.Body()
        body.url = url.normalized
        body.tags = [FetchCache.tag]
        // One connection: the file grows in order, so clients streaming it get each byte once it is written (a split
        // download's gapless prefix is known only when its segment state is saved).
        body.connections = 1
        var draft = try JobDraft.validate(body, destinations: destinations)
        draft.keyRule = settings.keyRule
        let key = draft.dedupeKey
        if let cached = await cachedJob(forKey: key) {
            // Several nodes: the entry may be another node's, or refreshed by another node's revalidation.
            if supervisor.role != nil { await cache.loadStored(jobID: cached.id) }
            let entry = cache.entry(for: cached, key: key)
            switch entry.freshness.decision(at: Date()) {
            case .fresh:
                return try await hit(request, cached, result: .hit)
            case .revalidate(let mayServeStale):
                guard permission == .fetch else { return try await hit(request, cached, result: .stale) }
                let revalidation = FetchRevalidation(fetch: self, cached: cached, draft: draft, key: key,
                                                     mayServeStale: mayServeStale)
                return try await revalidation.answer(request)
            }
        }
        guard permission == .fetch else {
            throw APIError(.forbidden, "this token may only read: it may fetch only what is already cached")
        }
        await eviction.makeRoom(for: 1)
        var job = try await create(draft)
        if job.state == .finished, !cache.mayKeep(jobID: job.id) {
            // Dedupe found a finished file its origin said not to keep (`no-store`, `private`): fetch it again.
            cache.forget(jobID: job.id)
            try? await supervisor.delete(job.id)
            job = try await create(draft)
        }
        if let older = await FetchClusterDedupe(supervisor: supervisor).yield(job) {
            settle(job.id)
            job = older
        }
        return try await answer(request, following: job.id, key: key, retrying: draft)
    }

    private func count(_ response: HTTPResponse, request: HTTPRequest) {
        let result = response.headers["Ferry-Cache"] ?? "refused"
        var bytes: Int64 = 0
        if request.method != .HEAD, response.status.allowsBody {
            switch response.body {
            case .file(let file): bytes = file.length
            case .stream(let length, _): bytes = length ?? 0
            case .bytes(let data): bytes = Int64(data.count)
            case .parts(let parts): bytes = parts.reduce(0) { $0 + $1.length }
            case .empty, .upgrade: bytes = 0
            }
        }
        // A miss's bytes came from the origin (even when its file finished before the answer); the rest from the cache.
        counters.answered(result, bytes: bytes, fromCache: result != "miss")
    }

    // MARK: Answers

    enum CacheResult: String { case hit, miss, revalidated, stale }

    /// A finished job's file, like `/content`, labelled.
    func hit(_ request: HTTPRequest, _ job: JobRecord, result: CacheResult) async throws -> HTTPResponse {
        cache.used(jobID: job.id)
        var response = try await content.finishedFile(request, job: job)
        response.headers["Content-Disposition"] = nil
        return Self.labelled(response, job: job.id, result: result)
    }

    /// The answer from a job fetching from the origin: streamed once it responded, its file once finished, the
    /// origin's status when it refused.
    /// - Parameter claimsKey: the job's file answers `key` from now (a miss); false for a revalidation's new body,
    ///   which takes the key only once complete (`FetchRevalidation`).
    /// - Parameter retrying: the draft to create again, once, when the file did not fit under the spool quota and
    ///   evicting entries made room for it.
    /// - Parameter rejoined: `jobID` was found after the job first followed was gone (followed once, not again).
    func answer(_ request: HTTPRequest, following jobID: String, key: String, claimsKey: Bool = true,
                retrying draft: JobDraft? = nil, evictions: Int = 0, rejoined: Bool = false) async throws -> HTTPResponse {
        let progress = await FetchProgress.await(jobID, in: supervisor, deadline: Date().addingTimeInterval(responseTimeout))
        switch progress {
        case .pending:
            return Self.labelled(errorResponse(.gatewayTimeout, code: "network_error",
                                               message: "the origin did not answer within \(Int(responseTimeout)) s"), job: jobID, result: .miss)
        case .gone:
            // Given up for an older job of the key (`FetchClusterDedupe`), or removed: follow a live one if any, once.
            if claimsKey, !rejoined, let other = await supervisor.dedupeMatches(key, finishedAnywhere: content.objects != nil).first(where: {
                $0.id != jobID && $0.tags.contains(FetchCache.tag) && $0.delivery == nil
            }) {
                return try await answer(request, following: other.id, key: key, claimsKey: claimsKey, rejoined: true)
            }
            throw APIError(.conflict, "the download of this URL was removed while waiting; ask again")
        case .failed(let job, let failure) where failure.code == .quotaExceeded && draft != nil && evictions < 16:
            // The size is not on the job (the engine refused before announcing it): one more entry at a time.
            settle(jobID)
            guard await eviction.makeRoom(for: job.bytesExpected, sparing: [job.id]) > 0, let draft else {
                return Self.labelled(Self.originFailure(failure), job: job.id, result: .miss)
            }
            let again = try await create(draft)
            return try await answer(request, following: again.id, key: key, claimsKey: claimsKey, retrying: draft,
                                    evictions: evictions + 1)
        case .failed(let job, let failure):
            // A job waiting out a back-off (5xx, unreachable) would keep asking the origin for no one: it is stopped.
            if job.state != .failed, job.tags.contains(FetchCache.tag) { _ = try? await supervisor.cancel(job.id) }
            settle(jobID)
            return Self.labelled(Self.originFailure(failure), job: job.id, result: .miss)
        case .finished(let job):
            settle(jobID)
            if claimsKey, cache.mayKeep(jobID: job.id) { _ = cache.replace(key: key, with: job.id) }
            return try await hit(request, job, result: .miss)
        case .responded(let job):
            settle(jobID)
            if claimsKey, cache.mayKeep(jobID: job.id) { _ = cache.replace(key: key, with: job.id) }
            // The stream sends the file from its first byte whoever joins when, so its length is the file's.
            var response = content.follow(job, length: job.bytesExpected)
            response.headers["Content-Disposition"] = nil
            return Self.labelled(response, job: job.id, result: .miss)
        }
    }

    /// Creates (or joins, through dedupe) the job fetching `draft`.
    func create(_ draft: JobDraft) async throws -> JobRecord {
        for attempt in 0..<200 {
            switch try await supervisor.create([draft])[0] {
            case .created(let job), .existing(let job):
                return job
            case .refused(.creationInProgress) where attempt < 199:
                try await Task.sleep(nanoseconds: 5_000_000)  // another client's identical job is being stored
            case .refused(let error):
                throw APIError(error)
            }
        }
        throw APIError(.unavailable, "the download of this URL could not be started")
    }

    /// The finished job holding `key`'s file: the one recorded, else one job dedupe finds (not one with a delivery).
    func cachedJob(forKey key: String) async -> JobRecord? {
        if let id = cache.currentJob(forKey: key), let job = supervisor.table.entry(id)?.0, job.state == .finished,
           let name = job.filename, FileManager.default.fileExists(atPath: spool.finishedPath(for: name)) || content.objects != nil {
            return job
        }
        return await supervisor.dedupeMatches(key, finishedAnywhere: content.objects != nil).first {
            $0.state == .finished && $0.delivery == nil && cache.mayKeep(jobID: $0.id)
        }
    }

    /// Once the job ends: a failed one, or a finished one the origin said not to keep, is deleted (a while later,
    /// so that clients still reading its file or state finish first).
    func settle(_ jobID: String) {
        let supervisor = supervisor, cache = cache
        Task {
            var job = supervisor.table.entry(jobID)?.0
            while let current = job, [.waiting, .downloading, .paused].contains(current.state) {
                try? await Task.sleep(nanoseconds: 200_000_000)
                job = supervisor.table.entry(jobID)?.0
            }
            guard let job, job.tags.contains(FetchCache.tag) else { cache.forget(jobID: jobID); return }
            // A job that may be kept, or one the API created or asked more of (deliveries), stays.
            let keep = job.state == .finished && cache.mayKeep(jobID: jobID) || job.delivery != nil
            guard !keep else { return }
            try? await Task.sleep(nanoseconds: 30_000_000_000)
            cache.forget(jobID: jobID)
            try? await supervisor.delete(jobID)
        }
    }

    static func labelled(_ response: HTTPResponse, job: String, result: CacheResult) -> HTTPResponse {
        var response = response
        response.headers["Ferry-Cache"] = result.rawValue
        response.headers["Ferry-Job"] = job
        return response
    }

    /// The origin's refusal with its own status and Ferry's error body; a refused destination is `403`, an origin
    /// that cannot be reached `502`.
    static func originFailure(_ failure: JobFailure) -> HTTPResponse {
        if failure.code == .forbiddenDestination {
            return APIError(.forbiddenDestination, failure.message).response(for: HTTPRequest(target: "/"))
        }
        if failure.code == .quotaExceeded {
            return APIError(.quotaExceeded, failure.message).response(for: HTTPRequest(target: "/"))
        }
        if let status = failure.httpStatus, (400..<600).contains(status) {
            // A `retrying` wait's sentence names a retry this answer gives up: the origin's answer is what counts.
            let message = failure.code == .retrying ? "the origin answered \(status)" : failure.message
            return errorResponse(HTTPStatus(code: status), code: FailureCode.httpError.rawValue, message: message)
        }
        return errorResponse(.badGateway, code: failure.code.rawValue, message: "the origin cannot be reached: \(failure.message)")
    }

    static func refusal(_ problem: URLProblem) -> APIError {
        switch problem {
        case .invalid(let why): APIError(.invalidURL, why)
        case .unsupportedScheme(let scheme): APIError(.unsupportedScheme, "'\(scheme)' is not fetched through: http and https only")
        }
    }

    // MARK: Credentials

    /// The token (or read token) as `Authorization: Bearer`, a session, or (on `/fetch` only) the password of HTTP
    /// Basic credentials, which is how tools send a URL's userinfo; open mode takes local callers.
    func authorize(_ request: HTTPRequest) throws(APIError) -> Permission {
        if let authorization = request.headers["Authorization"], authorization.lowercased().hasPrefix("basic "),
           !access.isOpen {
            let encoded = authorization.dropFirst(6).trimmingCharacters(in: .whitespaces)
            guard let decoded = Data(base64Encoded: encoded).flatMap({ String(data: $0, encoding: .utf8) }),
                  let colon = decoded.firstIndex(of: ":"),
                  let level = access.level(ofSecret: String(decoded[decoded.index(after: colon)...])) else {
                throw Self.unauthorized("the password of the Basic credentials is not a valid token")
            }
            return level == .full ? .fetch : .cachedOnly
        }
        do throws(APIError) {
            return try access.authenticate(request).access == .full ? .fetch : .cachedOnly
        } catch where error.code == .unauthorized {
            throw Self.unauthorized(error.message + "; tools that cannot send headers put the token in the URL: http://token:<token>@host/fetch/...")
        }
    }

    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, message, headers: ["WWW-Authenticate": "Basic realm=\"ferry\", Bearer realm=\"ferry\""])
    }
}
