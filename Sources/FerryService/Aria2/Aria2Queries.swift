import FerryStore
import Foundation

/// aria2's reading methods, answered from the supervisor's table on the caller's thread, without waiting for the
/// actor (`peek` for one job, one pass of `Aria2Jobs.gather` for the lists and counts), reusing the status objects of
/// jobs that did not change (`cache`). Stateless; the supervisor owns the jobs and `LiveSettings` the settings.
struct Aria2Queries: Sendable {
    let supervisor: JobSupervisor
    let settings: LiveSettings
    let status: Aria2Status
    /// This process's `getSessionInfo` id.
    let sessionID: String
    /// The status objects the lists wrote (`status`'s, so for its directory).
    let cache = Aria2StatusCache()
    /// The waiting and stopped lists' latest answers.
    let answers = Aria2ListCache()

    static let version: RPCValue = .object([
        "version": .string("1.37.0"),
        "enabledFeatures": .array(["Async DNS", "GZip", "HTTPS", "Message Digest", "SFTP"].map(RPCValue.string)),
    ])

    /// The job whose gid is `gid`, as the table has it now; another key's job is not found (`JobAccess.current`).
    func job(_ gid: String) throws(Aria2Error) -> (id: String, job: JobRecord, rates: LiveRates?) {
        guard let id = supervisor.peekID(gid: gid), let (job, rates) = supervisor.peek(id),
              JobAccess.current.sees(job) else { throw .notFound(gid: gid) }
        return (id, job, rates)
    }

    /// The jobs the call's principal may see (`JobAccess.current`), with the lists `lists` kept; their jobs come with the
    /// status objects already written for `fields` where those can be reused, when `fields` is given.
    func jobs(keeping lists: Aria2Jobs.Lists = .all, fields: Aria2StatusFields? = nil) -> Aria2Jobs {
        Aria2Jobs.gather(from: supervisor.table, access: JobAccess.current, keeping: lists,
                         reusing: fields.map(cache.reusable(for:)))
    }

    func tellStatus(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let found = try job(gid)
        return status.render(found.job, rates: found.rates, keys: try params.strings(1))
    }

    func tellActive(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        let fields = Aria2StatusFields(keys: try params.strings(0))
        let active = jobs(keeping: .active, fields: fields).active
        return write(active.entries, at: active.order, fields: fields)
    }

    /// `tellWaiting` (`stopped` false) and `tellStopped`: aria2's offset rules (`Aria2Page`).
    func tellPage(_ params: Aria2Params, stopped: Bool) throws(Aria2Error) -> RPCValue {
        let offset = try params.int(0)
        let num = try params.int(1)
        guard num >= 0 else { throw .negative(at: 1) }
        let fields = Aria2StatusFields(keys: try params.strings(2))
        // The same question is answered the same while no job in the list's states changed (`Aria2ListCache`).
        let question = Aria2ListCache.Question(stopped: stopped, offset: offset, num: num, fields: fields,
                                               onlyKey: JobAccess.current.onlyKey)
        let change = supervisor.table.lastChange(among: stopped ? [.finished, .failed, .cancelled] : [.waiting, .paused])
        if let answer = answers.answer(question, change: change) { return answer }
        let all = jobs(keeping: stopped ? .stopped : .waiting, fields: fields)
        let list = stopped ? all.stopped : all.waiting
        let page = Aria2Page(offset: offset, num: num, count: list.count)
        let answer = write(list.entries, at: page.positions.map { list.order[$0] }, fields: fields)
        answers.keep(answer, for: question, change: change)
        return answer
    }

    /// The status objects of `entries` at `positions`, keeping those written for the next calls.
    private func write(_ entries: [Aria2Jobs.Entry], at positions: [Int], fields: Aria2StatusFields) -> RPCValue {
        let (list, written) = status.write(entries, at: positions, fields: fields)
        if !written.isEmpty { cache.keep(written, jobs: supervisor.table.entryCounts.jobs) }
        return list
    }

    func getUris(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        .array(status.uris(try job(try params.gid(0)).job))
    }

    func getFiles(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        .array([status.file(try job(try params.gid(0)).job)])
    }

    func getServers(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let found = try job(gid)
        guard found.job.state == .downloading else { throw Aria2Error("No active download for GID#\(gid)") }
        let speed = RPCValue.decimal(Int64((found.rates?.speed ?? 0).rounded()))
        let servers = status.uris(found.job).compactMap { entry -> RPCValue? in
            guard entry.object?["status"] == .string("used"), let uri = entry.object?["uri"] else { return nil }
            return .object(["uri": uri, "currentUri": uri, "downloadSpeed": speed])
        }
        return .array([.object(["index": .string("1"), "servers": .array(servers)])])
    }

    func getPeers(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        _ = try job(try params.gid(0))
        return .array([])
    }

    func getOption(_ params: Aria2Params) throws(Aria2Error) -> RPCValue {
        Aria2Options.of(try job(try params.gid(0)).job, directory: status.directory)
    }

    func getGlobalOption() async -> RPCValue {
        let current = await settings.current
        return Aria2Options.global(maxBytesPerSecond: current.maxBytesPerSecond, maxConcurrent: current.maxConcurrent,
                                   directory: status.directory)
    }

    /// Counted in the same pass as the lists, no record copied.
    func getGlobalStat() -> RPCValue {
        let all = jobs(keeping: [])
        return .object([
            "downloadSpeed": .decimal(Int64(all.speed.rounded())),
            "uploadSpeed": .string("0"),
            "numActive": .decimal(all.counts.active),
            "numWaiting": .decimal(all.counts.waiting),
            "numStopped": .decimal(all.counts.stopped),
            "numStoppedTotal": .decimal(all.counts.stopped),
        ])
    }

    var sessionInfo: RPCValue { .object(["sessionId": .string(sessionID)]) }
}
