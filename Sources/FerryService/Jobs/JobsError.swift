import FerryStore

/// Why the supervisor refuses an action, in the domain's words. The API chooses the HTTP status and code
/// (`APIError.init(_: JobsError)`, in API/), nowhere else.
enum JobsError: Error, Equatable, CustomStringConvertible {
    case notFound(id: String)
    /// The action does not apply in the job's state; the sentence says why (`JobAction.conflictMessage`).
    case notApplicable(String)
    /// An identical job is being created by another request right now.
    case creationInProgress
    /// The spool holds as much as its quota allows.
    case spoolFull(quota: Int64)
    /// The change could not be made durable.
    case storeFailed(String)
    /// The node running the job did not show the forwarded change in time (several nodes).
    case ownerSilent(node: String)
    /// The change is too large to forward to the node running the job (several nodes: a notification's payload).
    case tooLargeToForward(node: String, bytes: Int)
    /// The API key holds as many jobs as its `maxJobs` allows.
    case keyJobLimit(limit: Int64)
    /// The API key fetched its `bytesPerDay` in the last 24 hours; its window frees in `retryAfter` seconds.
    case keyDailyBytes(limit: Int64, retryAfter: Int)
    /// An answer went missing (a defect, never the caller's fault).
    case lostAnswer

    var description: String {
        switch self {
        case .notFound(let id): "no job with id '\(id)'"
        case .notApplicable(let why): why
        case .creationInProgress: "an identical job is being created right now; retry"
        case .spoolFull(let quota): "the spool is at its quota of \(quota) bytes; new downloads are refused until space is freed"
        case .storeFailed(let why): "the job store failed: \(why)"
        case .ownerSilent(let node): "node '\(node)' runs this job and did not apply the change in time; retry"
        case .tooLargeToForward(let node, let bytes):
            "node '\(node)' runs this job, and a change of \(bytes) bytes is more than can be forwarded to it "
                + "(\(ClusterChannel.commandLimit) at most; a URL that long is refused by most origins anyway)"
        case .keyJobLimit(let limit): "this key holds \(limit) jobs, its maxJobs; delete some before adding more"
        case .keyDailyBytes(let limit, let retryAfter):
            "this key fetched \(limit) bytes or more in the last 24 hours, its bytesPerDay; retry in \(retryAfter) s"
        case .lostAnswer: "job creation lost an answer"
        }
    }

    static func store(_ error: any Error) -> JobsError { .storeFailed("\(error)") }
}
