import FerryCore
import FerryStore
import Foundation

/// aria2's methods that change jobs or settings, made through the same supervisor operations and validation as the
/// REST API (`JobDraft.validate`, `create`, `pause`, `resume`, `cancel`, `update`, `delete`, `purge`, `LiveSettings`):
/// the guard, dedupe and events are theirs. Stateless.
struct Aria2Actions: Sendable {
    let queries: Aria2Queries
    let destinations: AddressPolicy
    var supervisor: JobSupervisor { queries.supervisor }

    /// A refusal of the supervisor or of validation, as aria2's code-1 error with Ferry's sentence.
    static func refusal(_ error: any Error, gid: String? = nil) -> Aria2Error {
        switch error {
        case let error as Aria2Error: return error
        case JobsError.notFound where gid != nil: return .notFound(gid: gid!)
        case let error as JobsError: return Aria2Error(error.description)
        case let error as APIError: return Aria2Error(error.message)
        default: return Aria2Error("\(error)")
        }
    }

    func addUri(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        guard let uris = try params.strings(0) else { throw .missing(at: 0) }
        var body = try Aria2Options.jobBody(uris: uris, options: try params.options(1) ?? [:])
        if params.value(2) != nil {
            let position = try params.int(2)
            guard position >= 0 else { throw .negative(at: 2) }
            let waiting = queries.jobs(keeping: .waiting).waiting.sorted.compactMap(\.job)
            body.priority = Aria2Jobs.priority(forPosition: Int(min(position, Int64(waiting.count))), among: waiting)
        }
        do {
            let draft = try JobDraft.validate(body, destinations: destinations)
            switch try await supervisor.create([draft], owner: JobAccess.current.owner)[0] {
            case .created(let job), .existing(let job): return .string(JobGID.of(job.id))
            case .refused(let error): throw Self.refusal(error)
            }
        } catch {
            throw Self.refusal(error)
        }
    }

    /// `remove` and `forceRemove`: cancels a job that has not ended (aria2 removes only those).
    func remove(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let found = try queries.job(gid)
        guard !PurgeSelection.endedStates.contains(found.job.state) else {
            throw Aria2Error("Active Download not found for GID#\(gid)")
        }
        do { _ = try await supervisor.cancel(found.id) } catch { throw Self.refusal(error, gid: gid) }
        return .string(gid)
    }

    func pause(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let found = try queries.job(gid)
        guard [.waiting, .downloading, .delivering].contains(found.job.state) else { throw .cannot("paused", gid: gid) }
        do { _ = try await supervisor.pause(found.id) } catch { throw Self.refusal(error, gid: gid) }
        return .string(gid)
    }

    func unpause(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let found = try queries.job(gid)
        guard found.job.state == .paused else { throw .cannot("unpaused", gid: gid) }
        do { _ = try await supervisor.resume(found.id) } catch { throw Self.refusal(error, gid: gid) }
        return .string(gid)
    }

    /// `pauseAll` (`pausing`) and `unpauseAll`: every job it applies to; one that changed meanwhile is left as it is.
    func all(pausing: Bool) async -> RPCValue {
        let jobs = queries.jobs(keeping: pausing ? [.active, .waiting] : .waiting)
        let targets = pausing ? jobs.active.sorted + jobs.waiting.sorted.filter { $0.listing.state == .waiting }
                              : jobs.waiting.sorted.filter { $0.listing.state == .paused }
        for job in targets.compactMap(\.job) {
            _ = try? await (pausing ? supervisor.pause(job.id) : supervisor.resume(job.id))
        }
        return .string("OK")
    }

    func changePosition(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let pos = try params.int(1)
        let how = try params.string(2)
        let found = try queries.job(gid)
        let waiting = queries.jobs(keeping: .waiting).waiting.sorted.compactMap(\.job)
        guard let current = waiting.firstIndex(where: { $0.id == found.id }) else {
            throw Aria2Error("GID#\(gid) not found in the waiting queue.")
        }
        let others = waiting.filter { $0.id != found.id }
        let target = try Aria2Jobs.position(pos, how: how, current: current, others: others.count)
        let priority = Aria2Jobs.priority(forPosition: target, among: others)
        if priority != found.job.priority {
            try await update(found.id, gid: gid, JobPatch(priority: priority))
        }
        return .int(Int64(target))
    }

    /// `changeUri(gid, fileIndex, delUris, addUris[, position])`: when the job's URL is among those removed and
    /// another is added, the job's URL changes to it (`PATCH url`); answers `[deleted, added]`.
    func changeUri(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        guard try params.int(1) == 1 else { throw Aria2Error("The given file index is out of range or not found") }
        guard let deleted = try params.strings(2) else { throw .missing(at: 2) }
        guard let added = try params.strings(3) else { throw .missing(at: 3) }
        let found = try queries.job(gid)
        let current = SubmittedURL.redacting(found.job.url)
        guard deleted.contains(where: { $0 == found.job.url || $0 == current }), let replacement = added.first else {
            return .array([.int(0), .int(0)])
        }
        var draft = JobDraft.Body()
        draft.url = replacement
        let url: SubmittedURL
        do { url = try JobDraft.validate(draft, destinations: destinations).url } catch { throw Self.refusal(error) }
        try await update(found.id, gid: gid, JobPatch(url: url))
        return .array([.int(1), .int(1)])
    }

    /// `changeOption(gid, options)`: `max-download-limit` is the job's `maxBytesPerSecond`; `out` and `split` (or
    /// `max-connection-per-server`) change a paused job before it first starts, checked as `addUri`'s; options Ferry
    /// has no use for are ignored, as aria2 ignores options it cannot change.
    func changeOption(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        guard let options = try params.options(1) else { throw .missing(at: 1) }
        let found = try queries.job(gid)
        let asked = try Aria2Options.jobBody(uris: [found.job.url], options: options.filter { Self.beforeStart.contains($0.key) })
        if asked.filename != nil || asked.connections != nil {
            do {
                let draft = try JobDraft.validate(asked, destinations: destinations)
                _ = try await supervisor.changeBeforeStart(found.id, filename: draft.filename, connections: draft.connections)
            } catch {
                throw Self.refusal(error, gid: gid)
            }
        }
        if let rate = try Aria2Options.rateChange(options) {
            try await update(found.id, gid: gid, JobPatch(maxBytesPerSecond: rate))
        }
        return .string("OK")
    }

    /// The options `changeOption` applies before a job first starts.
    static let beforeStart: Set<String> = ["out", "split", "max-connection-per-server"]

    func changeGlobalOption(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        guard let options = try params.options(0) else { throw .missing(at: 0) }
        // The settings are the service's: a key that does not manage keys may not change them (as PATCH /settings).
        guard JobAccess.current.managesKeys else { throw .unauthorized }
        if let change = try Aria2Options.settingsChange(options, range: RuntimeSettings.maxConcurrentRange) {
            do { _ = try await queries.settings.change(change) } catch { throw Aria2Error(error.description) }
        }
        return .string("OK")
    }

    /// Deletes every ended job and its file.
    func purgeDownloadResult() async throws(Aria2Error) -> RPCValue {
        do { _ = try await supervisor.purge(PurgeSelection(cutoff: Date.distantFuture), visibleTo: JobAccess.current) } catch { throw Self.refusal(error) }
        return .string("OK")
    }

    /// Deletes one ended job and its file.
    func removeDownloadResult(_ params: Aria2Params) async throws(Aria2Error) -> RPCValue {
        let gid = try params.gid(0)
        let found = try queries.job(gid)
        guard PurgeSelection.endedStates.contains(found.job.state) else {
            throw Aria2Error("Could not remove download result of GID#\(gid)")
        }
        do { try await supervisor.delete(found.id) } catch { throw Self.refusal(error, gid: gid) }
        return .string("OK")
    }

    private func update(_ id: String, gid: String, _ patch: JobPatch) async throws(Aria2Error) {
        do { _ = try await supervisor.update(id, patch) } catch { throw Self.refusal(error, gid: gid) }
    }
}
