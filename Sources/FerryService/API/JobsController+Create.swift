import FerryHTTP
import FerryStore
import Foundation

/// `POST /api/v1/jobs`: one job or a batch, with or without an `Idempotency-Key`.
extension JobsController {
    func create(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let given = request.headers["Idempotency-Key"] else { return try await createJobs(request) }
        guard !given.isEmpty, given.utf8.count <= 255 else {
            throw APIError(.invalidRequest, "'Idempotency-Key' must be 1 to 255 characters")
        }
        // Each API key has its keys apart (the same key from two clients is two requests).
        let key = JobAccess.current.idempotencyScope + given
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
                    var draft = try JobDraft.validate(body, destinations: destinations)
                    draft.keyRule = keyRule
                    valid.append(draft)
                    slots.append(.success(valid.count - 1))
                } catch {
                    slots.append(.failure(error))
                }
            }
            drafts = valid
            let outcomes = slots
            render = { [supervisor] answers in Self.batchResponse(slots: outcomes, answers: answers, keyName: supervisor.keyName) }
        } else {
            let body = try RequestDecoding.decode(JobDraft.Body.self, from: request.body)
            var draft = try JobDraft.validate(body, destinations: destinations)
            draft.keyRule = keyRule
            drafts = [draft]
            render = { [supervisor] answers in Self.singleResponse(answers[0], for: request, keyName: supervisor.keyName) }
        }
        var makeRecord: (@Sendable ([JobSupervisor.Created]) -> IdempotencyRecord?)?
        if let idempotency {
            makeRecord = { answers in idempotency.record(for: render(answers)) }
        }
        // Called even with no valid draft, so that an idempotent batch of refusals records its answer.
        let answers = try await supervisor.create(drafts, owner: JobAccess.current.owner, idempotencyRecord: makeRecord)
        return render(answers)
    }

    private static func batchResponse(slots: [Result<Int, APIError>], answers: [JobSupervisor.Created],
                                      keyName: (JobRecord) -> String?) -> HTTPResponse {
        var json = JSONWriter(capacity: 600 * slots.count + 2)
        json.beginArray()
        for slot in slots {
            switch slot {
            case .success(let index): write(answers[index], into: &json, keyName: keyName)
            case .failure(let error): writeError(error, into: &json)
            }
        }
        json.endArray()
        return .json(.ok, json.bytes)
    }

    private static func singleResponse(_ answer: JobSupervisor.Created, for request: HTTPRequest,
                                       keyName: (JobRecord) -> String?) -> HTTPResponse {
        switch answer {
        case .created(let job):
            var response = HTTPResponse.json(.created, JobView.render(job, rates: nil, key: keyName(job)))
            response.headers["Location"] = "/api/v1/jobs/\(job.id)"
            return response
        case .existing(let job):
            var response = HTTPResponse.json(.ok, JobView.render(job, rates: nil, key: keyName(job)))
            response.headers["Location"] = "/api/v1/jobs/\(job.id)"
            return response
        case .refused(let error):
            return APIError(error).response(for: request)
        }
    }

    private static func write(_ answer: JobSupervisor.Created, into json: inout JSONWriter, keyName: (JobRecord) -> String?) {
        switch answer {
        case .created(let job), .existing(let job): JobView.write(job, rates: nil, into: &json, key: keyName(job))
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
}
