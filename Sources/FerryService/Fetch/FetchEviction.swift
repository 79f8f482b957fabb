import FerryCore
import FerryStore
import Foundation

/// Room for fetched files under `--spool-quota` (API.md, "Fetch-through"): finished fetch entries (jobs tagged
/// `fetch`) are deleted least recently used first, each with its `removed` event, until the new file fits. Jobs
/// created through the API are never chosen.
///
/// `victims` is pure; `makeRoom` reads the supervisor's table and deletes through the supervisor, as `DELETE` does.
struct FetchEviction: Sendable {
    let supervisor: JobSupervisor
    let cache: FetchCache

    /// An entry that may be evicted: its job, the bytes it holds and when it was last served.
    struct Candidate: Equatable {
        var jobID: String
        var bytes: Int64
        var lastUsed: Date
    }

    /// The candidates to delete, least recently used first, so that `held - freed + need <= quota`; none when that
    /// holds already. All of them when even that is not enough (the caller then finds the file still does not fit).
    static func victims(_ candidates: [Candidate], held: Int64, need: Int64, quota: Int64) -> [String] {
        var held = held
        var chosen: [String] = []
        for candidate in candidates.sorted(by: { ($0.lastUsed, $0.jobID) < ($1.lastUsed, $1.jobID) }) {
            if held + need <= quota { break }
            chosen.append(candidate.jobID)
            held -= candidate.bytes
        }
        return chosen
    }

    /// Deletes entries until `need` more bytes fit, sparing `sparing`; returns how many were deleted. Nothing without
    /// a quota. `need` nil (a file the engine refused before its size reached the job): one entry more than the room
    /// left asks for, at least one.
    @discardableResult
    func makeRoom(for need: Int64?, sparing: Set<String> = []) async -> Int {
        guard let quota = supervisor.dependencies.quota else { return 0 }
        let jobs = Array(supervisor.table.jobs.values).filter { !sparing.contains($0.id) }
        let held = SpoolBudget.held(by: jobs)
        let need = need ?? max(1, quota.budget.quota - held + 1)
        guard held + need > quota.budget.quota else { return 0 }
        let candidates = jobs.filter { job in
            job.state == .finished && job.tags.contains(FetchCache.tag) && !sparing.contains(job.id)
        }.map { job in
            Candidate(jobID: job.id, bytes: SpoolBudget.onDisk(job),
                      lastUsed: cache.lastUsed(jobID: job.id) ?? job.finishedAt ?? job.createdAt)
        }
        let chosen = Self.victims(candidates, held: held, need: need, quota: quota.budget.quota)
        for id in chosen {
            cache.forget(jobID: id)
            try? await supervisor.delete(id)
        }
        return chosen.count
    }
}
