import Foundation

/// Ferry's HTTP API, call by call: builds each request, sends it through a `CurlSession`, turns error bodies
/// into `ClientError.api` and JSON into `Job`s. Owns the session; used from the command's one thread.
public final class FerryAPI {
    public let session: CurlSession
    public var endpoint: ServerEndpoint { session.endpoint }

    public init(endpoint: ServerEndpoint) throws(ClientError) {
        session = try CurlSession(endpoint: endpoint)
    }

    // MARK: Jobs

    /// `POST /api/v1/jobs` with one object or an array.
    public func submit(_ submission: Submission) throws(ClientError) -> Fetched<[BatchItem]> {
        let response = try checked(session.send(.json("POST", "/api/v1/jobs", submission.body)))
        switch submission {
        case .single:
            let job = try decode(Job.self, response.body)
            return Fetched(value: [.job(job)], body: response.body, status: response.status)
        case .batch:
            let items = try decode([BatchAnswer].self, response.body)
            return Fetched(value: items.map(\.item), body: response.body, status: response.status)
        }
    }

    /// `GET /api/v1/jobs/{id}`.
    public func job(_ id: String) throws(ClientError) -> Fetched<Job> {
        let response = try checked(session.send(ClientRequest("GET", Self.jobPath(id))))
        return Fetched(value: try decode(Job.self, response.body), body: response.body, status: response.status)
    }

    /// One page of `GET /api/v1/jobs`: `states` (a comma list), `tag` and `search` (`q`) filter it on the server.
    public func jobs(states: String? = nil, tag: String? = nil, search: String? = nil, after cursor: String? = nil,
                     limit: Int = 1000) throws(ClientError) -> JobPage {
        let target = "/api/v1/jobs" + TargetEncoding.query([("state", states), ("tag", tag), ("q", search),
                                                            ("limit", String(limit)), ("after", cursor)])
        let response = try checked(session.send(ClientRequest("GET", target)))
        let page = try decode(PageBody.self, response.body)
        let raw = JSONSlices.arrayElements(ofKey: "jobs", in: response.body) ?? []
        return JobPage(jobs: page.jobs, rawJobs: raw.count == page.jobs.count ? raw : [],
                       next: page.next, eventID: response.head.header("Ferry-Event-Id").flatMap { Int64($0) })
    }

    /// Every page of `GET /api/v1/jobs`, following `next`. The event id is the first page's: events after it
    /// bring the whole listing up to date.
    public func allJobs(states: String? = nil, tag: String? = nil, search: String? = nil,
                        pageSize: Int = 1000) throws(ClientError) -> JobPage {
        var all = try jobs(states: states, tag: tag, search: search, limit: pageSize)
        var cursor = all.next
        while let next = cursor {
            let page = try jobs(states: states, tag: tag, search: search, after: next, limit: pageSize)
            all.jobs += page.jobs
            all.rawJobs += page.rawJobs
            cursor = page.next
        }
        all.next = nil
        return all
    }

    /// `POST /api/v1/jobs/{id}/pause|resume|cancel`.
    public func perform(_ action: JobAction, on id: String) throws(ClientError) -> Fetched<Job> {
        let response = try checked(session.send(.json("POST", Self.jobPath(id) + "/" + action.rawValue, [])))
        return Fetched(value: try decode(Job.self, response.body), body: response.body, status: response.status)
    }

    /// `DELETE /api/v1/jobs/{id}`.
    public func delete(_ id: String) throws(ClientError) {
        _ = try checked(session.send(ClientRequest("DELETE", Self.jobPath(id))))
    }

    // MARK: Content

    /// `HEAD /api/v1/jobs/{id}/content`: length and validators of a finished file.
    public func contentHead(_ id: String) throws(ClientError) -> ResponseHead {
        let response = try session.send(ClientRequest("HEAD", Self.jobPath(id) + "/content"))
        guard response.status == 200 else {
            // A HEAD answer has no body to carry the API's message: ask again with GET for the error, reading
            // no body if it turned out fine meanwhile.
            var body: [UInt8] = []
            var status = response.status
            _ = try session.stream(ClientRequest("GET", Self.jobPath(id) + "/content"),
                                   onHead: { status = $0.status },
                                   onBody: { chunk in
                                       guard status >= 300, body.count < 65_536 else { return .stop }
                                       body.append(contentsOf: chunk)
                                       return .continue
                                   })
            throw Self.error(status: status >= 300 ? status : response.status, body: body)
        }
        return response.head
    }

    /// `GET /api/v1/jobs/{id}/content`, streamed. `onHead` sees only 200 and 206 heads: other answers are read
    /// whole and thrown as the API's error.
    public func content(_ id: String, headers: [ClientRequest.Header],
                        onHead: (ResponseHead) throws -> Void,
                        onBody: (UnsafeRawBufferPointer) throws -> Void,
                        onIdle: (() -> Void)? = nil) throws(ClientError) {
        var errorHead: ResponseHead?
        var errorBody: [UInt8] = []
        let request = ClientRequest("GET", Self.jobPath(id) + "/content", headers: headers, patience: .transfer)
        _ = try session.stream(request, onHead: { head in
            if head.status == 200 || head.status == 206 { try onHead(head) } else { errorHead = head }
        }, onBody: { chunk in
            if errorHead != nil {
                if errorBody.count < 65_536 { errorBody.append(contentsOf: chunk) }
            } else {
                try onBody(chunk)
            }
            return .continue
        }, onIdle: onIdle)
        if let errorHead { throw Self.error(status: errorHead.status, body: errorBody) }
    }

    // MARK: Events

    /// `GET /api/v1/events[?jobs=…]` with `Last-Event-ID`, streamed to `onChunk` until it says `.stop` or the
    /// server ends the stream.
    public func events(jobs: [String]?, lastEventID: Int64?, onChunk: (UnsafeRawBufferPointer) throws -> StreamDecision,
                       onIdle: (() -> Void)? = nil) throws(ClientError) -> StreamEnd {
        let target = "/api/v1/events" + TargetEncoding.query([("jobs", jobs?.joined(separator: ","))])
        var headers = [ClientRequest.Header("Accept", "text/event-stream")]
        if let lastEventID { headers.append(.init("Last-Event-ID", String(lastEventID))) }
        var errorHead: ResponseHead?
        var errorBody: [UInt8] = []
        let end = try session.stream(
            ClientRequest("GET", target, headers: headers, patience: .stream),
            onHead: { head in if head.status != 200 { errorHead = head } },
            onBody: { chunk in
                if errorHead != nil {
                    if errorBody.count < 65_536 { errorBody.append(contentsOf: chunk) }
                    return .continue
                }
                return try onChunk(chunk)
            }, onIdle: onIdle)
        if let errorHead { throw Self.error(status: errorHead.status, body: errorBody) }
        return end
    }

    // MARK: Settings

    /// `GET /api/v1/settings`.
    public func settings() throws(ClientError) -> Fetched<ServiceSettings> {
        let response = try checked(session.send(ClientRequest("GET", "/api/v1/settings")))
        return Fetched(value: try decode(ServiceSettings.self, response.body), body: response.body, status: response.status)
    }

    /// `PATCH /api/v1/settings` with the fields given: `maxBytesPerSecond` `.some(nil)` removes the limit.
    public func changeSettings(maxBytesPerSecond: Int64??, maxConcurrent: Int?) throws(ClientError) -> Fetched<ServiceSettings> {
        var fields: [String] = []
        if let rate = maxBytesPerSecond { fields.append("\"maxBytesPerSecond\":" + (rate.map(String.init) ?? "null")) }
        if let maxConcurrent { fields.append("\"maxConcurrent\":\(maxConcurrent)") }
        let body = Array(("{" + fields.joined(separator: ",") + "}").utf8)
        let response = try checked(session.send(.json("PATCH", "/api/v1/settings", body)))
        return Fetched(value: try decode(ServiceSettings.self, response.body), body: response.body, status: response.status)
    }

    // MARK: API keys

    /// `POST /api/v1/keys`: the key made, with its token (shown this once).
    public func createKey(_ key: NewKey) throws(ClientError) -> Fetched<APIKey> {
        let response = try checked(session.send(.json("POST", "/api/v1/keys", key.body)))
        return Fetched(value: try decode(APIKey.self, response.body), body: response.body, status: response.status)
    }

    /// `GET /api/v1/keys`.
    public func keys() throws(ClientError) -> Fetched<[APIKey]> {
        let response = try checked(session.send(ClientRequest("GET", "/api/v1/keys")))
        return Fetched(value: try decode(KeyList.self, response.body).keys, body: response.body, status: response.status)
    }

    /// `DELETE /api/v1/keys/{id}`: revokes it at once.
    public func revokeKey(_ id: String) throws(ClientError) {
        _ = try checked(session.send(ClientRequest("DELETE", "/api/v1/keys/" + TargetEncoding.segment(id))))
    }

    private struct KeyList: Decodable {
        var keys: [APIKey]
    }

    // MARK: Helpers

    static func jobPath(_ id: String) -> String { "/api/v1/jobs/" + TargetEncoding.segment(id) }

    private func checked(_ response: ClientResponse) throws(ClientError) -> ClientResponse {
        guard (200..<300).contains(response.status) else { throw Self.error(status: response.status, body: response.body) }
        return response
    }

    /// The API's error body as a `ClientError`, or `.unexpectedResponse` when the body is not that shape.
    public static func error(status: Int, body: [UInt8]) -> ClientError {
        if let envelope = try? JSONDecoder().decode(ErrorEnvelope.self, from: Data(body)) {
            return .api(status: status, code: envelope.error.code, message: envelope.error.message)
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return .unexpectedResponse(status: status, detail: TerminalText.sanitized(text))
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: [UInt8]) throws(ClientError) -> T {
        do { return try JSONDecoder().decode(type, from: Data(body)) } catch {
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            throw .unexpectedResponse(status: 200, detail: "not the expected JSON: \(TerminalText.sanitized(text))")
        }
    }

    private struct ErrorEnvelope: Decodable {
        struct Body: Decodable {
            var code: String
            var message: String
        }
        var error: Body
    }

    private struct PageBody: Decodable {
        var jobs: [Job]
        var next: String?
    }

    private struct BatchAnswer: Decodable {
        var item: BatchItem

        init(from decoder: any Decoder) throws {
            // A job has an id (and may carry an `error` too, e.g. a waiting one); a refusal is only `{"error"}`.
            if let job = try? Job(from: decoder) {
                item = .job(job)
            } else {
                let envelope = try ErrorEnvelope(from: decoder)
                item = .refused(code: envelope.error.code, message: envelope.error.message)
            }
        }
    }
}
