import FerryCore
import Foundation

/// A job's own name in `files/` for the bytes of another job's finished file (a job sharing another's transfer,
/// API.md's dedupe): a hard link, or a copy where the file system refuses links. Each job then owns a name, and
/// removing one name leaves the bytes to the others.
///
/// Stateless; runs on the engine's disk queue, with the `Spool`'s name reservations (its lock) and paths.
enum FileSharing {
    /// Links finished file `source` under `filename` (reserved for `jobID`; on a clash with another file, the
    /// next free variant, which becomes its reservation), then syncs `files/`. A name already linked to `source`
    /// is taken as this job's, left by a crash after the link. Returns the name; throws with `ENOENT` when
    /// `source` is gone.
    static func share(finished source: String, as filename: String, for jobID: String,
                      in spool: Spool) throws(SystemError) -> String {
        let from = spool.finishedPath(for: source)
        var candidate = spool.reserve(filename: filename, for: jobID)
        var number = 0
        while true {
            let target = spool.finishedPath(for: candidate)
            if candidate != source {
                if link(from, target) == 0 { break }
                let failure = errno
                if failure == EEXIST, Spool.sameFile(from, target) { break }
                if [EXDEV, EPERM, EMLINK, ENOTSUP].contains(failure) {
                    try copy(from, to: target, temporary: spool.partialDirectory + "/" + jobID + ".share.tmp")
                    break
                }
                guard failure == EEXIST else { throw SystemError("link", target, errno: failure) }
            }
            number += 1
            candidate = spool.reserve(filename: Filename.variant(filename, number: number), for: jobID)
        }
        try Spool.syncDirectory(spool.filesDirectory)
        return candidate
    }

    /// Copies `from` to `target` through `temporary`, synced (a leftover `*.tmp` in `partial/` goes at start-up).
    private static func copy(_ from: String, to target: String, temporary: String) throws(SystemError) {
        unlink(temporary)
        do {
            try FileManager.default.copyItem(atPath: from, toPath: temporary)
        } catch {
            throw SystemError("copy", from, errno: access(from, F_OK) == 0 ? EIO : ENOENT)
        }
        defer { unlink(temporary) }
        let fd = open(temporary, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", temporary) }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else { throw SystemError("fsync", temporary) }
        guard link(temporary, target) == 0 else { throw SystemError("link", target) }
    }
}
