import Foundation

/// A webhook notice as listed (API.md, "API keys": `GET /api/v1/notices`): the notice, where it stands and what
/// its last try got. Notices stay in the outbox's table once settled (delivered or failed) until purged
/// (`JobStore.purgeSettledNotices`), so they can be listed and sent again.
public struct NoticeStatus: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        case pending, delivered, failed
    }

    public var notice: WebhookNotice
    public var state: State
    /// The HTTP status of the last try; nil before any, or when the last one got no answer.
    public var lastStatus: Int?
    /// When it was delivered or given up; nil while pending.
    public var settledAt: Date?

    public init(notice: WebhookNotice, state: State, lastStatus: Int? = nil, settledAt: Date? = nil) {
        self.notice = notice
        self.state = state
        self.lastStatus = lastStatus
        self.settledAt = settledAt
    }
}

/// Which notices `JobStore.notices` lists: every condition given must hold. A pure value.
public struct NoticeFilter: Sendable, Equatable {
    public var state: NoticeStatus.State?
    public var jobID: String?
    /// Notices of this API key's jobs only (`jobs.owner_key`; a deleted job's notices then show no more).
    public var ownerKey: String?

    public init(state: NoticeStatus.State? = nil, jobID: String? = nil, ownerKey: String? = nil) {
        self.state = state
        self.jobID = jobID
        self.ownerKey = ownerKey
    }
}

/// How a notice's tries ended (`JobStore.settleNotices(finishing:rescheduling:)`).
public struct NoticeSettlement: Sendable, Equatable {
    public var id: String
    /// `.delivered` or `.failed`.
    public var state: NoticeStatus.State
    public var attempts: Int
    public var lastStatus: Int?
    public var at: Date

    public init(id: String, state: NoticeStatus.State, attempts: Int, lastStatus: Int?, at: Date) {
        precondition(state != .pending, "a settled notice is delivered or failed")
        self.id = id
        self.state = state
        self.attempts = attempts
        self.lastStatus = lastStatus
        self.at = at
    }
}
