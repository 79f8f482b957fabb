import FerryCore
import Foundation

/// The filenames reserved for jobs in the spool's `files/`, both ways round: the name of each job, and the jobs
/// holding each name (usually one). Thread-safe: every call takes its own lock, alone (no other spool lock is held
/// under it). Whether a file of a name is in `files/` is asked of the caller (`Spool`), which owns the directory.
final class FilenameReservations: @unchecked Sendable {
    private let lock = NSLock()
    /// Filename reserved per job id.
    private var names: [String: String] = [:]
    /// The jobs holding each name.
    private var holders: [String: Set<String>] = [:]
    /// Per name asked for, the lowest variant number that may be free (every lower one was held, or had a file, when
    /// last looked at; a variant released by its job lowers it again): many jobs of one name ("download", "index.html")
    /// would otherwise probe every variant before theirs, a file check each, on the engine's queue. In the load suite's
    /// soak, with 1,000 jobs of one name, that was 9% of Ferry's CPU. Only where the probe starts: each candidate from
    /// there on is still checked, so a name is never shared. Kept while some job holds a name `reserveFree` gave for it
    /// (`jobs`), so it has at most one entry per job.
    private var probeFrom: [String: (number: Int, jobs: Int)] = [:]
    /// The name asked for and the variant number of each job's name that `reserveFree` gave.
    private var variants: [String: (asked: String, number: Int)] = [:]

    /// Reserves `filename` for a job, or the first free variant "name (1).ext", "name (2).ext"... A name is free
    /// when no other job holds it and `inFiles` says no file has it. Reserving again for the same job returns its
    /// current name when that is the one asked for.
    func reserve(_ filename: String, for jobID: String, inFiles: (String) -> Bool) -> String {
        lock.withLock {
            if names[jobID] == filename { return filename }
            return reserveFree(filename, for: jobID, inFiles: inFiles)
        }
    }

    /// `reserve`, checked even when the job holds the name (another job may too); a name a file has is kept when
    /// `ownFile` says that file is the job's own.
    func reserveUnshared(_ filename: String, for jobID: String, inFiles: (String) -> Bool, ownFile: (String) -> Bool) -> String {
        lock.withLock {
            if holders[filename].map({ $0.subtracting([jobID]).isEmpty }) ?? true, !inFiles(filename) || ownFile(filename) {
                set(filename, for: jobID)
                return filename
            }
            return reserveFree(filename, for: jobID, inFiles: inFiles)
        }
    }

    /// The name reserved for a job, if any.
    func name(of jobID: String) -> String? {
        lock.withLock { names[jobID] }
    }

    /// Gives a job `filename` without checking it (a name it already holds), or forgets its name (nil).
    func assign(_ filename: String?, to jobID: String) {
        lock.withLock { set(filename, for: jobID) }
    }

    /// `filename` or its first variant (from `probeFrom`) that no other job holds and no file has, reserved. Under `lock`.
    private func reserveFree(_ filename: String, for jobID: String, inFiles: (String) -> Bool) -> String {
        var start = probeFrom[filename]?.number ?? 0
        if let own = variants[jobID], own.asked == filename { start = min(start, own.number) }   // asked again
        var number = start
        var candidate = number == 0 ? filename : Filename.variant(filename, number: number)
        while holders[candidate].map({ $0.count > 1 || !$0.contains(jobID) }) == true || inFiles(candidate) {
            number += 1
            candidate = Filename.variant(filename, number: number)
        }
        if names[jobID] == candidate { return candidate }   // it keeps the name it holds
        set(candidate, for: jobID)   // may release a variant of `filename` below `start`: the probe starts there next
        let probe = probeFrom[filename]
        probeFrom[filename] = (probe.map { $0.number < start ? $0.number : number + 1 } ?? number + 1, (probe?.jobs ?? 0) + 1)
        variants[jobID] = (filename, number)
        return candidate
    }

    /// Sets or clears a job's name in both tables. Under `lock`.
    private func set(_ filename: String?, for jobID: String) {
        let old = if let filename { names.updateValue(filename, forKey: jobID) } else { names.removeValue(forKey: jobID) }
        if let old {
            holders[old]?.remove(jobID)
            if holders[old]?.isEmpty == true { holders[old] = nil }
        }
        if old != filename, let given = variants.removeValue(forKey: jobID), let probe = probeFrom[given.asked] {
            probeFrom[given.asked] = probe.jobs == 1 ? nil : (min(probe.number, given.number), probe.jobs - 1)
        }
        if let filename { holders[filename, default: []].insert(jobID) }
    }
}
