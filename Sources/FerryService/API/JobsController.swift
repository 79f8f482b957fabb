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
    /// The dedupe key's rule (`--cache-key-ignore`), shared with fetch-through.
    var keyRule: CacheKeyRule = .standard

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
        // A tag, a search text or a key's own jobs are looked up in the store (indexed there); states alone are read
        // from the table.
        let access = JobAccess.current
        let filter = access.narrowing(JobFilter(states: states, tag: nonEmpty(request.queryValue("tag")),
                                                text: nonEmpty(request.queryValue("q"))))
        if let text = filter.text, text.unicodeScalars.count > Self.maxSearchLength {
            throw APIError(.invalidRequest, "'q' may be at most \(Self.maxSearchLength) characters")
        }
        let page = filter.selectsByContent || filter.ownerKey != nil
            ? try await supervisor.list(matching: filter, after: after, limit: limit)
            : await supervisor.list(states: states, after: after, limit: limit)
        var json = JSONWriter(capacity: 600 * page.jobs.count + 40)
        json.beginObject()
        json.key("jobs")
        json.beginArray()
        for (job, rates) in page.jobs where access.sees(job) {
            JobView.write(job, rates: rates, into: &json, node: supervisor.peekNode(job.id), key: supervisor.keyName(of: job))
        }
        json.endArray()
        json.field("next", page.next.map(RequestDecoding.cursor))
        json.endObject()
        var response = HTTPResponse.json(.ok, json.bytes)
        response.headers["Ferry-Event-Id"] = String(page.eventID)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    /// The longest `q` of `GET /api/v1/jobs`, in Unicode scalars (a URL rarely is longer).
    static let maxSearchLength = 2048

    /// A query value, `nil` when absent or empty (`tag=` and `q=` filter nothing, as `state=` does).
    private func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }

    /// Answered on the connection queue: reads the supervisor's table without waiting for the actor.
    func get(_ request: HTTPRequest) throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        let (job, rates) = try visible(id)
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
                            body: .bytes(JobView.render(job, rates: rates, node: supervisor.peekNode(id),
                                                        key: supervisor.keyName(of: job))))
    }

    /// The job `id` as the table has it, when the request may see it (`JobAccess`); `404` as if absent otherwise.
    func visible(_ id: String) throws(APIError) -> (JobRecord, LiveRates?) {
        try JobAccess.current.require(supervisor.peek(id), id: id)
    }

    // MARK: Change

    func patch(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        _ = try visible(id)
        let body = try RequestDecoding.decode(PatchBody.self, from: request.body)
        var patch = JobPatch(priority: body.priority, maxBytesPerSecond: body.maxBytesPerSecond, url: nil,
                             tags: try body.tags.map(TagList.validate))
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
            throw APIError(.invalidRequest, "nothing to change: give 'priority', 'maxBytesPerSecond', 'url' or 'tags'")
        }
        let job = try await supervisor.update(id, patch)
        return .json(.ok, JobView.render(job, rates: await supervisor.job(id)?.1, node: supervisor.peekNode(id),
                                         key: supervisor.keyName(of: job)))
    }

    func delete(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        _ = try visible(id)
        try await supervisor.delete(id)
        return HTTPResponse(status: .noContent)
    }

    private func act(_ request: HTTPRequest, _ action: (String) async throws -> JobRecord) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        _ = try visible(id)
        let job = try await action(id)
        return .json(.ok, JobView.render(job, rates: await supervisor.job(id)?.1, node: supervisor.peekNode(id),
                                         key: supervisor.keyName(of: job)))
    }
}
