import FerryCore
import FerryStore

/// Jobs that share another job's transfer (API.md, POST /api/v1/jobs: a job is one client's intent, a transfer and
/// its file are bytes several jobs may share), and the rules of sharing.
///
/// A follower (`JobRecord.follows`) is a waiting job with no transfer of its own: when its leader's file is
/// finished it gets its own file from it (a link or a copy, `SharedFile`), checked against its own checksum, and
/// goes on through the same paths as a download (delivery, notices); when the leader stops or goes first, it gets a
/// transfer of its own.
///
/// Pure value: the rules are static functions; the instance, owned and changed by the `JobSupervisor` actor only,
/// indexes the followers waiting for each leader and the followers whose file is being made.
struct SharedTransfers {
    /// What a follower does, given its leader.
    enum Step: Equatable {
        /// The leader's transfer runs: wait for its file.
        case wait
        /// The leader's file is finished and there: make the follower's own from it.
        case share
        /// The leader is gone, stopped or failed, or its file is gone: the follower needs a transfer of its own.
        case runAlone
    }

    private var followersByLeader: [String: Set<String>] = [:]
    private var making: Set<String> = []

    /// Whether a job with this draft may be answered with `job` itself (`200`): it asks nothing `job` does not
    /// already do (delivery, notices, checksum, filename, mirrors, tags). Transfer settings (priority, speed,
    /// connections, `paused`) are the shared transfer's and ask nothing.
    static func asksMore(_ draft: JobDraft, than job: JobRecord) -> Bool {
        if let wanted = draft.deliver {
            guard let has = job.delivery, has.url == wanted.url, has.method == wanted.method, has.field == wanted.field,
                  has.fields == wanted.fields, has.headers == wanted.headers, has.deleteAfter == wanted.deleteAfter
            else { return true }
        }
        if let notify = draft.notify, notify.normalized != job.notify { return true }
        if let checksum = draft.checksum, checksum != job.checksum,
           !(checksum.algorithm == .sha256 && job.sha256 == checksum.value) { return true }
        if let filename = draft.filename, filename != job.requestedFilename, filename != job.filename { return true }
        if !draft.mirrors.isEmpty,
           !Set(draft.mirrors.map(\.normalized)).isSubset(of: Set((job.sources ?? []).map(\.url))) { return true }
        return !Set(draft.tags).isSubset(of: Set(job.tags))
    }

    /// What a follower of `leader` does now (`fileExists`: the leader's file is in the spool).
    static func step(leader: JobRecord?, fileExists: Bool) -> Step {
        guard let leader else { return .runAlone }
        if leader.state != .cancelled, leader.sha256 != nil, fileExists { return .share }
        // Finished, its digest still to come (`.digested`): the follower's checksum and `sha256` need it.
        if leader.state == .finished, fileExists { return .wait }
        switch leader.state {
        case .waiting, .downloading: return .wait
        default: return .runAlone
        }
    }

    /// `follower` waits for `leader`'s file.
    mutating func wait(_ follower: String, for leader: String) {
        followersByLeader[leader, default: []].insert(follower)
    }

    /// The followers that waited for `leader`, no longer indexed (each is taken up again).
    mutating func takeFollowers(of leader: String) -> [String] {
        followersByLeader.removeValue(forKey: leader).map { $0.sorted() } ?? []
    }

    /// Marks a follower's file as being made; false when it already is.
    mutating func beginMaking(_ follower: String) -> Bool { making.insert(follower).inserted }

    mutating func endMaking(_ follower: String) { making.remove(follower) }
}
