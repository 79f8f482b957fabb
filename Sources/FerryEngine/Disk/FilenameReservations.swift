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

    /// `filename` or its first variant that no other job holds and no file has, reserved. Under `lock`.
    private func reserveFree(_ filename: String, for jobID: String, inFiles: (String) -> Bool) -> String {
        var number = 0
        var candidate = filename
        while holders[candidate].map({ !$0.subtracting([jobID]).isEmpty }) == true || inFiles(candidate) {
            number += 1
            candidate = Filename.variant(filename, number: number)
        }
        set(candidate, for: jobID)
        return candidate
    }

    /// Sets or clears a job's name in both tables. Under `lock`.
    private func set(_ filename: String?, for jobID: String) {
        let old = if let filename { names.updateValue(filename, forKey: jobID) } else { names.removeValue(forKey: jobID) }
        if let old {
            holders[old]?.remove(jobID)
            if holders[old]?.isEmpty == true { holders[old] = nil }
        }
        if let filename { holders[filename, default: []].insert(jobID) }
    }
}
