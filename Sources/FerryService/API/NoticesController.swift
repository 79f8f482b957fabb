import FerryCore
import FerryHTTP
import FerryStore
import Foundation

/// `GET /api/v1/notices?state=&job=` and `POST /api/v1/notices/{id}/retry` (API.md, "API keys"): the webhook notices,
/// pending, delivered or failed, and sending one again at once with the same `webhook-id`. A `read` or `write` key
/// sees the notices of its own jobs only (`JobAccess`); another's answers `404` as if absent. Stateless: the store
/// keeps the notices, the `WebhookSender` sends them.
struct NoticesController: Sendable {
    let store: any JobStore
    let supervisor: JobSupervisor
    let webhooks: WebhookSender

    func register(_ routes: RouteTable) {
        routes.add(.GET, "/api/v1/notices", list)
        routes.add(.POST, "/api/v1/notices/:id/retry", retry)
    }

    func list(_ request: HTTPRequest) async throws -> HTTPResponse {
        var filter = NoticeFilter(ownerKey: JobAccess.current.onlyKey)
        if let text = request.queryValue("state"), !text.isEmpty {
            guard let state = NoticeStatus.State(rawValue: text) else {
                throw APIError(.invalidRequest, "'state' must be one of: pending, delivered, failed")
            }
            filter.state = state
        }
        if let job = request.queryValue("job"), !job.isEmpty { filter.jobID = job }
        var limit = 100
        if let text = request.queryValue("limit") {
            guard let value = Int(text), value >= 1 else { throw APIError(.invalidRequest, "'limit' must be a positive whole number") }
            limit = min(value, 1000)
        }
        let found: [NoticeStatus]
        do { found = try await store.notices(filter, limit: limit) } catch { throw APIError.store(error) }
        var json = JSONWriter(capacity: 256 * found.count + 16)
        json.beginObject()
        json.key("notices")
        json.beginArray()
        for status in found { Self.write(status, into: &json) }
        json.endArray()
        json.endObject()
        var response = HTTPResponse.json(.ok, json.bytes)
        response.headers["Cache-Control"] = "no-store"
        return response
    }

    func retry(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.pathParameters["id"] ?? ""
        let status: NoticeStatus?
        do { status = try await store.notice(id: id) } catch { throw APIError.store(error) }
        // The notice's job decides who sees it (a key: its own jobs' only; a deleted job's: the administrator's).
        guard let status, JobAccess.current.sees(owner: try await owner(ofJob: status.notice.jobID)) else {
            throw APIError(.notFound, "no notice with id '\(id)'")
        }
        guard status.state != .delivered else {
            throw APIError(.conflict, "notice '\(id)' was delivered; only a pending or failed notice is sent again")
        }
        let again: WebhookNotice?
        do { again = try await store.retryNotice(id: id, at: Date()) } catch { throw APIError.store(error) }
        guard let again else { throw APIError(.conflict, "notice '\(id)' was delivered meanwhile") }
        webhooks.wake()
        var json = JSONWriter(capacity: 320)
        Self.write(NoticeStatus(notice: again, state: .pending, lastStatus: status.lastStatus), into: &json)
        return .json(.ok, json.bytes)
    }

    /// The key owning job `id`, from the table or else the store; nil for the administrator's or a deleted job.
    private func owner(ofJob id: String) async throws(APIError) -> String? {
        if let (job, _) = supervisor.peek(id) { return job.ownerKey }
        do { return try await store.job(id: id)?.ownerKey } catch { throw APIError.store(error) }
    }

    /// A notice as API.md shows it: `{"id", "jobId", "type", "url", "state", "attempts", "lastStatus",
    /// "nextAttemptAt", "deliveredAt"}` (the URL's userinfo as `***@`).
    static func write(_ status: NoticeStatus, into json: inout JSONWriter) {
        json.beginObject()
        json.field("id", status.notice.id)
        json.field("jobId", status.notice.jobID)
        json.field("type", status.notice.type)
        json.field("url", SubmittedURL.redacting(status.notice.url))
        json.field("state", status.state.rawValue)
        json.field("attempts", status.notice.attempts)
        json.field("lastStatus", status.lastStatus)
        json.field("nextAttemptAt", timestamp: status.state == .pending ? status.notice.dueAt : nil)
        json.field("deliveredAt", timestamp: status.state == .delivered ? status.settledAt : nil)
        json.endObject()
    }
}
