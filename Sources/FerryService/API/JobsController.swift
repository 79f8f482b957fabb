import FerryCore
import FerryHTTP
import FerryStore
import Foundation

/// `/api/v1/jobs` and `/api/v1/jobs/{id}`: create, list, read, change, act on and delete jobs.
/// Stateless: the supervisor owns jobs, the store owns idempotency records.
struct JobsController: Sendable {
    let supervisor: JobSupervisor
    let store: any JobStore
    let idempotency: IdempotencyGate
    let destinations: AddressPolicy

    static let maxBatch = 5_000

    func register(_ routes: RouteTable) {
        routes.add(.POST, "/api/v1/jobs", create)
        routes.add(.GET, "/api/v1/jobs", list)
        routes.add(.DELETE, "/api/v1/jobs", purge)
        routes.addImmediate(.GET, "/api/v1/jobs/:id", get)
        routes.add(.PATCH, "/api/v1/jobs/:id", patch)
        routes.add(.DELETE, "/api/v1/jobs/:id", delete)
        routes.add(.POST, "/api/v1/jobs/:id/pause") { try await act($0) { try await supervisor.pause($0) } }
        routes.add(.POST, "/api/v1/jobs/:id/resume") { try await act($0) { try await supervisor.resume($0) } }
        routes.add(.POST, "/api/v1/jobs/:id/cancel") { try await act($0) { try await supervisor.cancel($0) } }
    }

    // MARK: Create

    func create(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let key = request.headers["Idempotency-Key"] else { return try await createJobs(request) }
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw APIError(.invalidRequest, "'Idempotency-Key' must be 1 to 255 characters")
        }
        let fingerprint = RequestFingerprint.of(method: "POST", path: "/api/v1/jobs", body: request.body)
        guard await idempotency.begin(key) else {
            throw APIError(.conflict, "a request with this Idempotency-Key is still being processed")
        }
        do {
            let answer = try await replayOrCreate(request, key: key, fingerprint: fingerprint)
            await idempotency.end(key)
            return answer
        } catch {
            await idempotency.end(key)
            throw error
        }
    }

    private func replayOrCreate(_ request: HTTPRequest, key: String, fingerprint: String) async throws -> HTTPResponse {
        let earlier: IdempotencyRecord?
        do { earlier = try await store.idempotencyRecord(key: key) } catch { throw APIError.store(error) }
        if let earlier, earlier.createdAt > Date().addingTimeInterval(-IdempotencyGate.keyLifetime) {
            guard earlier.requestHash == fingerprint else {
                throw APIError(.conflict, "this Idempotency-Key was used with a different request body")
            }
            var response = HTTPResponse.json(HTTPStatus(code: earlier.status), earlier.body)
            if earlier.status == 201, let id = Self.firstID(in: earlier.body) {
                response.headers["Location"] = "/api/v1/jobs/\(id)"
            }
            response.headers["Idempotent-Replayed"] = "true"
            return response
        }
        // The answer is stored with the jobs it created, in one transaction (see `IdempotencyIntent`).
        let intent = IdempotencyIntent(key: key, fingerprint: fingerprint, request: request)
        return try await createJobs(request, idempotency: intent)
    }

    private func createJobs(_ request: HTTPRequest, idempotency: IdempotencyIntent? = nil) async throws -> HTTPResponse {
        let render: @Sendable ([JobSupervisor.Created]) -> HTTPResponse
        let drafts: [JobDraft]
        if RequestDecoding.isArray(request.body) {
            let items = try RequestDecoding.decode([BatchItem].self, from: request.body)
            guard items.count <= Self.maxBatch else {
                throw APIError(.payloadTooLarge, "a batch may hold at most \(Self.maxBatch) jobs")
            }
            var valid: [JobDraft] = []
            var slots: [Result<Int, APIError>] = []
            for item in items {
                do {
                    let body = try item.result.get()
                    valid.append(try JobDraft.validate(body, destinations: destinations))
                    slots.append(.success(valid.count - 1))
                } catch {
                    slots.append(.failure(error))
                }
            }
            drafts = valid
            let outcomes = slots
            render = { answers in Self.batchResponse(slots: outcomes, answers: answers) }
        } else {
            let body = try RequestDecoding.decode(JobDraft.Body.self, from: request.body)
            drafts = [try JobDraft.validate(body, destinations: destinations)]
            render = { answers in Self.singleResponse(answers[0], for: request) }
        }
        var makeRecord: (@Sendable ([JobSupervisor.Created]) -> IdempotencyRecord?)?
        if let idempotency {
            makeRecord = { answers in idempotency.record(for: render(answers)) }
        }
        // Called even with no valid draft, so that an idempotent batch of refusals records its answer.
        let answers = try await supervisor.create(drafts, idempotencyRecord: makeRecord)
        return render(answers)
    }

    private static func batchResponse(slots: [Result<Int, APIError>], answers: [JobSupervisor.Created]) -> HTTPResponse {
        var json = JSONWriter(capacity: 600 * slots.count + 2)
        json.beginArray()
        for slot in slots {
            switch slot {
            case .success(let index): write(answers[index], into: &json)
            case .failure(let error): writeError(error, into: &json)
            }
        }
        json.endArray()
        return .json(.ok, json.bytes)
    }

    private static func singleResponse(_ answer: JobSupervisor.Created, for request: HTTPRequest) -> HTTPResponse {
        switch answer {
        case .created(let job):
            var response = HTTPResponse.json(.created, JobView.render(job, rates: nil))
            response.headers["Location"] = "/api/v1/jobs/\(job.id)"
            return response
        case .existing(let job):
            var response = HTTPResponse.json(.ok, JobView.render(job, rates: nil))
            response.headers["Location"] = "/api/v1/jobs/\(job.id)"
            return response
        case .refused(let error):
            return APIError(error).response(for: request)
        }
    }

    private static func write(_ answer: JobSupervisor.Created, into json: inout JSONWriter) {
        switch answer {
        case .created(let job), .existing(let job): JobView.write(job, rates: nil, into: &json)
        case .refused(let error): writeError(APIError(error), into: &json)
        }
    }

    private static func writeError(_ error: APIError, into json: inout JSONWriter) {
        json.beginObject()
        json.key("error")
        json.beginObject()
        json.field("code", error.code.rawValue)
        json.field("message", error.message)
        json.endObject()
        json.endObject()
    }

    private static func firstID(in body: [UInt8]) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else { return nil }
        return object["id"] as? String
    }

    // MARK: Read

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        var states: Set<JobState>?
        if let text = request.queryValue("state"), !text.isEmpty {
            var set = Set<JobState>()
            for name in text.split(separator: ",") {
                guard let state = JobState(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                    throw APIError(.invalidRequest, "'state' must be a comma list of: \(JobState.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                set.insert(state)
            }
            states = set
        }
        var limit = 100
        if let text = request.queryValue("limit") {
            guard let value = Int(text), value >= 1 else { throw APIError(.invalidRequest, "'limit' must be a positive whole number") }
            limit = min(value, 1000)
        }
        var after: Int64?
        if let text = request.queryValue("after"), !text.isEmpty { after = try RequestDecoding.sequence(fromCursor: text) }
        let page = await supervisor.list(states: states, after: after, limit: limit)
        var json = JSONWriter(capacity: 600 * page.jobs.count + 40)
        json.beginObject()
        json.key("jobs")
        json.beginArray()
        for (job, rates) in page.jobs { JobView.write(job, rates: rates, into: &json) }
        json.endArray()
        json.field("next", page.next.map(RequestDecoding.cursor))
        json.endObject()
        var response = HTTPResponse.json(.ok, json.bytes)
        response.headers["Ferry-Event-Id"] = String(page.eventID)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    // MARK: Purge

    /// `DELETE /api/v1/jobs?state=finished,failed&olderThan=7d`: removes ended jobs and their files,
    /// oldest first. `olderThan` is required (a duration, or an RFC 3339 time), so a bare DELETE on the
    /// collection never empties it; `state` defaults to every ended state and may name only those.
    func purge(_ request: HTTPRequest) async throws -> HTTPResponse {
        let selection = try Self.purgeSelection(state: request.queryValue("state"),
                                                olderThan: request.queryValue("olderThan"), now: Date())
        let removed = try await supervisor.purge(selection)
        var json = JSONWriter(capacity: 32 * removed.count + 32)
        json.beginObject()
        json.field("removed", removed.count)
        json.key("ids")
        json.beginArray()
        for id in removed { json.string(id) }
        json.endArray()
        json.endObject()
        return .json(.ok, json.bytes)
    }

    static func purgeSelection(state: String?, olderThan: String?, now: Date) throws -> PurgeSelection {
        guard let olderThan, !olderThan.isEmpty else {
            throw APIError(.invalidRequest, "'olderThan' is required: a duration such as 7d, or an RFC 3339 time")
        }
        let cutoff: Date
        if let seconds = DurationText.parse(olderThan) {
            cutoff = now.addingTimeInterval(-seconds)
        } else if let time = Timestamp.parse(olderThan) {
            cutoff = time
        } else {
            throw APIError(.invalidRequest, "'olderThan' must be a duration such as 7d, or an RFC 3339 time")
        }
        var states = PurgeSelection.endedStates
        if let state, !state.isEmpty {
            states = []
            for name in state.split(separator: ",") {
                guard let value = JobState(rawValue: name.trimmingCharacters(in: .whitespaces)),
                      PurgeSelection.endedStates.contains(value) else {
                    throw APIError(.invalidRequest, "'state' must be a comma list of: finished, failed, cancelled")
                }
                states.insert(value)
            }
        }
        return PurgeSelection(states: states, cutoff: cutoff)
    }

    /// Answered on the connection queue: reads the supervisor's table without waiting for the actor.
    func get(_ request: HTTPRequest) throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        guard let (job, rates) = supervisor.peek(id) else { throw APIError.jobNotFound(id) }
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                            body: .bytes(JobView.render(job, rates: rates)))
    }

    // MARK: Change

    func patch(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        let body = try RequestDecoding.decode(PatchBody.self, from: request.body)
        var patch = JobPatch(priority: body.priority, maxBytesPerSecond: body.maxBytesPerSecond, url: nil)
        if let priority = body.priority, !(-1_000_000...1_000_000).contains(priority) {
            throw APIError(.invalidRequest, "'priority' must be between -1000000 and 1000000")
        }
        if case .some(.some(let rate)) = body.maxBytesPerSecond, rate < 1 {
            throw APIError(.invalidRequest, "'maxBytesPerSecond' must be a positive number of bytes per second, or null")
        }
        if let text = body.url {
            var draftBody = JobDraft.Body()
            draftBody.url = text
            patch.url = try JobDraft.validate(draftBody, destinations: destinations).url
        }
        guard !patch.isEmpty else {
            throw APIError(.invalidRequest, "nothing to change: give 'priority', 'maxBytesPerSecond' or 'url'")
        }
        let job = try await supervisor.update(id, patch)
        return .json(.ok, JobView.render(job, rates: await supervisor.job(id)?.1))
    }

    func delete(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await supervisor.delete(request.pathParameters["id"] ?? "")
        return HTTPResponse(status: .noContent)
    }

    private func act(_ request: HTTPRequest, _ action: (String) async throws -> JobRecord) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        let job = try await action(id)
        return .json(.ok, JobView.render(job, rates: await supervisor.job(id)?.1))
    }
}

/// Idempotency keys being processed right now, so that two concurrent requests with one key
/// cannot both create jobs. Records themselves live in the store (kept 24 hours).
actor IdempotencyGate {
    static let keyLifetime: Double = 24 * 3600
    private var inFlight: Set<String> = []

    func begin(_ key: String) -> Bool { inFlight.insert(key).inserted }
    func end(_ key: String) { inFlight.remove(key) }
}

/// A create request's `Idempotency-Key` and fingerprint, and how its answer becomes the record that
/// replays it. Answers of 500 and above are not recorded (a retry should try again).
struct IdempotencyIntent: Sendable {
    let key: String
    let fingerprint: String
    let request: HTTPRequest

    func record(for response: HTTPResponse) -> IdempotencyRecord? {
        guard case .bytes(let body) = response.body, response.status.code < 500 else { return nil }
        return IdempotencyRecord(key: key, requestHash: fingerprint, status: response.status.code, body: body,
                                 createdAt: Date())
    }
}
