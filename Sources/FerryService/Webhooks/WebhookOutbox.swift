import FerryCore
import FerryStore
import Foundation

/// Makes the notices a job change causes (API.md, "Webhooks"), for the supervisor to commit with the change.
///
/// A notice goes to the job's own `notify` URL and to the global `--webhook-url`, one notice (one `webhook-id`)
/// per receiver, each with the same body: `{"type", "timestamp", "data": <the job as the API renders it>}`. Pure
/// but for the random ids; the clock is given.
struct WebhookOutbox: Sendable {
    /// The notice types Ferry sends. Open for more (`job.delivering`, with onward delivery).
    enum NoticeType: String, Sendable {
        case finished = "job.finished"
        case failed = "job.failed"
        case cancelled = "job.cancelled"
        case delivering = "job.delivering"
    }

    /// `--webhook-url` (normalized, userinfo kept), receiving every job's notices.
    var globalURL: String?

    /// The notices for `job`, which has just entered the state `type` names; none when nobody listens.
    func notices(_ type: NoticeType, for job: JobRecord, at now: Date) -> [WebhookNotice] {
        var receivers: [String] = []
        if let notify = job.notify { receivers.append(notify) }
        if let globalURL, globalURL != job.notify { receivers.append(globalURL) }
        guard !receivers.isEmpty else { return [] }
        let body = Self.body(type, job: job, at: now)
        return receivers.map { url in
            WebhookNotice(id: Self.newID(), jobID: job.id, type: type.rawValue, url: url, body: body, createdAt: now)
        }
    }

    /// The type of notice a job entering `state` causes, if any. Exhaustive on purpose: a new state (`delivering`,
    /// which has its notice) must say here whether it has one.
    static func noticeType(entering state: JobState) -> NoticeType? {
        switch state {
        case .finished: .finished
        case .failed: .failed
        case .cancelled: .cancelled
        case .delivering: .delivering
        case .waiting, .downloading, .paused: nil
        }
    }

    static func body(_ type: NoticeType, job: JobRecord, at now: Date) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.field("type", type.rawValue)
        json.field("timestamp", timestamp: now)
        json.key("data")
        JobView.write(job, rates: nil, into: &json)
        json.endObject()
        return json.bytes
    }

    /// `msg_` and 32 hex digits of OpenSSL randomness.
    static func newID() -> String { "msg_" + Secret.hex(Secret.randomBytes(16)) }
}
