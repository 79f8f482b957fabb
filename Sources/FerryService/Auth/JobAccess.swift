import FerryStore

/// The one decision of which jobs a request may see and act on (API.md, "API keys"): the administrator and `admin`
/// keys see every job, a `read` or `write` key only the jobs it created. Every path asks it: REST lists and actions,
/// content, follow streams, event streams (`EventFilter.owned`), metrics, notices. A job it does not show answers
/// `404` as if absent (`require`).
///
/// A pure value. The server binds the request's access as `JobAccess.current` (a task-local) around each request,
/// once the guard has resolved its `Principal`; code outside a request (the supervisor's own work, tests driving
/// controllers directly) sees `administrator`.
struct JobAccess: Sendable, Equatable {
    let principal: Principal

    @TaskLocal static var current = JobAccess(principal: .administrator)

    static let administrator = JobAccess(principal: .administrator)

    /// The key whose jobs alone are shown; nil when every job is.
    var onlyKey: String? {
        guard case .key(let key) = principal, key.scope != .admin else { return nil }
        return key.id
    }

    /// The key new jobs belong to (any key, `admin` ones too); nil for the administrator's.
    var owner: String? {
        guard case .key(let key) = principal else { return nil }
        return key.id
    }

    /// Whether keys may be made, listed, changed and revoked: the administrator and `admin` keys.
    var managesKeys: Bool { onlyKey == nil }

    /// Whether the request may see a job owned by `owner` (nil: the administrator's).
    func sees(owner: String?) -> Bool {
        guard let onlyKey else { return true }
        return owner == onlyKey
    }

    func sees(_ job: JobRecord) -> Bool { sees(owner: job.ownerKey) }

    /// `job` when the request may see it; `404` as if absent otherwise (and for nil).
    func require<Value>(_ entry: (JobRecord, Value)?, id: String) throws(APIError) -> (JobRecord, Value) {
        guard let entry, sees(entry.0) else { throw APIError.jobNotFound(id) }
        return entry
    }

    /// `filter` narrowed to the jobs the request may see.
    func narrowing(_ filter: JobFilter) -> JobFilter {
        var narrowed = filter
        if let onlyKey { narrowed.ownerKey = onlyKey }
        return narrowed
    }

    /// The namespace of `Idempotency-Key`s and dedupe: each key has its own, the administrator and admin keys theirs.
    var idempotencyScope: String { owner.map { "key:\($0):" } ?? "" }
}
